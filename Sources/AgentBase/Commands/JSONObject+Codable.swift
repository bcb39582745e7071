import JSONSchema

/// A request member that must be a JSON object but is otherwise open (a workflow's
/// definition, a step): kept as it is, its members in their order (a `[String: JSONValue]`
/// would lose it, and the settings file is written in that order).
extension JSONObject: Codable {
    /// Through a coder other than ``JSONValueEncoder`` (which takes the object as it is).
    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(self).encode(to: encoder)
    }

    /// Through a coder other than ``JSONValueDecoder`` (which takes the object as it is).
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch(JSONObject.self, .init(codingPath: decoder.codingPath, debugDescription: "expected an object, found \(Describe.article(value))"))
        }
        self = object
    }
}
