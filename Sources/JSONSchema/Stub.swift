// TEMPORARY stand-in until the real JSONSchema library lands. Not committed as final.
import Foundation

public struct JSONNumber: Hashable, Sendable {
    public var doubleValue: Double
    public init(_ v: Int) { doubleValue = Double(v) }
    public init(_ v: Double) { doubleValue = v }
    public var intValue: Int? { doubleValue.rounded() == doubleValue && abs(doubleValue) < 9e18 ? Int(doubleValue) : nil }
    public var isInteger: Bool { doubleValue.rounded() == doubleValue }
}

public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var keys: [String] = []
    private var storage: [String: JSONValue] = [:]
    public init() {}
    public init(_ pairs: [(String, JSONValue)]) { for (k, v) in pairs { self[k] = v } }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue { if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) } }
            else if storage.removeValue(forKey: key) != nil { keys.removeAll { $0 == key } }
        }
    }
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }
    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var i = 0
        return AnyIterator { () -> (key: String, value: JSONValue)? in
            guard i < keys.count else { return nil }
            defer { i += 1 }
            return (keys[i], storage[keys[i]]!)
        }
    }
    public static func == (a: JSONObject, b: JSONObject) -> Bool { a.storage == b.storage }
    public func hash(into h: inout Hasher) { h.combine(storage) }
}

public enum JSONValue: Hashable, Sendable {
    case null, bool(Bool), number(JSONNumber), string(String), array([JSONValue]), object(JSONObject)
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let o) = self { o } else { nil } }
    public var stringValue: String? { if case .string(let o) = self { o } else { nil } }
    public var boolValue: Bool? { if case .bool(let o) = self { o } else { nil } }
    public var numberValue: JSONNumber? { if case .number(let o) = self { o } else { nil } }
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let n): n.isInteger ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
    public static func parse(_ string: String) throws -> JSONValue { try parse(Array(string.utf8)) }
    public static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        let any = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        return convert(any)
    }
    private static func convert(_ any: Any) -> JSONValue {
        switch any {
        case is NSNull: return .null
        case let n as NSNumber:
            if String(describing: type(of: n)).contains("Boolean") { return .bool(n.boolValue) }
            return .number(JSONNumber(n.doubleValue))
        case let s as String: return .string(s)
        case let a as [Any]: return .array(a.map(convert))
        case let d as [String: Any]: return .object(JSONObject(d.keys.sorted().map { ($0, convert(d[$0]!)) }))
        default: return .null
        }
    }
    public func serialized(pretty: Bool = false, sortedKeys: Bool = false) -> String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n.intValue.map(String.init) ?? String(n.doubleValue)
        case .string(let s):
            let d = try! JSONSerialization.data(withJSONObject: s, options: [.fragmentsAllowed])
            return String(decoding: d, as: UTF8.self)
        case .array(let a): return "[" + a.map { $0.serialized() }.joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.map { JSONValue.string($0.key).serialized() + ":" + $0.value.serialized() }.joined(separator: ",") + "}"
        }
    }
}
