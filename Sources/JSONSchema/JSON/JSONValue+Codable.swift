// The conformance lives beside the type so that every layer (the worker's jsonl/1 frames
// in AgentCore too) can code JSON values through Codable.

extension JSONValue: Codable {
    /// Through a coder other than ``JSONValueEncoder`` (which takes the value as it is).
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .number(let number):
            var container = encoder.singleValueContainer()
            if let int = number.intValue { try container.encode(int) } else { try container.encode(number.doubleValue) }
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .object(let object):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in object { try container.encode(value, forKey: AnyKey(stringValue: key)) }
        }
    }

    /// Through a coder other than ``JSONValueDecoder`` (which takes the value as it is).
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: AnyKey.self) {
            var object = JSONObject()
            for key in container.allKeys { object[key.stringValue] = try container.decode(JSONValue.self, forKey: key) }
            self = .object(object)
        } else if var container = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !container.isAtEnd { items.append(try container.decode(JSONValue.self)) }
            self = .array(items)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let bool = try? container.decode(Bool.self) { self = .bool(bool) }
            else if let int = try? container.decode(Int.self) { self = .number(JSONNumber(int)) }
            else if let double = try? container.decode(Double.self) { self = .number(JSONNumber(double)) }
            else { self = .string(try container.decode(String.self)) }
        }
    }
}

/// Any member name (a `JSONValue` object's).
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
