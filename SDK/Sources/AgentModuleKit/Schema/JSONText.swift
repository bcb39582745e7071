import Foundation

/// A minimal JSON tree the SDK uses to write manifests and schemas. Kept private to the SDK so
/// that modules carry no dependency beyond Foundation.
indirect enum JSONText: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONText])
    case object([(String, JSONText)])

    static func == (lhs: JSONText, rhs: JSONText) -> Bool { lhs.serialized() == rhs.serialized() }

    /// Converts what `JSONSerialization` produced.
    init(foundation value: Any) {
        switch value {
        case let s as String: self = .string(s)
        case let n as NSNumber:
            // Foundation on Linux hands booleans out as a distinct NSNumber subclass.
            if String(describing: type(of: n)).contains("Boolean") {
                self = .bool(n.boolValue)
            } else if String(cString: n.objCType) == "d" || String(cString: n.objCType) == "f" {
                self = .double(n.doubleValue)
            } else {
                self = .int(n.intValue)
            }
        case let a as [Any]: self = .array(a.map(JSONText.init(foundation:)))
        case let d as [String: Any]:
            self = .object(d.keys.sorted().map { ($0, JSONText(foundation: d[$0]!)) })
        default: self = .null
        }
    }

    /// The value for `JSONSerialization`.
    var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let b): b
        case .int(let i): i
        case .double(let d): d
        case .string(let s): s
        case .array(let a): a.map(\.foundationValue)
        case .object(let o): Dictionary(o.map { ($0.0, $0.1.foundationValue) }, uniquingKeysWith: { _, last in last })
        }
    }

    func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            // JSON has no NaN or infinity.
            if !d.isFinite { out += "null" } else if d.rounded() == d, abs(d) < 1e15 { out += String(Int(d)) } else { out += "\(d)" }
        case .string(let s): JSONText.writeString(s, to: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, (k, v)) in o.enumerated() {
                if i > 0 { out += "," }
                JSONText.writeString(k, to: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
