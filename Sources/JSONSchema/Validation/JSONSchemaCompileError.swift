/// A schema that cannot be compiled: malformed keyword values, unresolvable references,
/// invalid regular expressions or unsupported required vocabularies.
public struct JSONSchemaCompileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// JSON pointer (or absolute URI with pointer fragment, for schemas in other documents)
    /// of the offending schema location.
    public var schemaLocation: String
    /// What is wrong.
    public var message: String

    /// Creates a compile error.
    public init(schemaLocation: String, message: String) {
        self.schemaLocation = schemaLocation
        self.message = message
    }

    /// `<location or "/">: <message>`.
    public var description: String {
        "\(schemaLocation.isEmpty ? "/" : schemaLocation): \(message)"
    }
}
