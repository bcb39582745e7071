import JSONSchema

/// A configured output that makes no sense: where (a JSON pointer into the output, or into
/// the `outputs` array when parsed as a list) and what is wrong.
public struct OutputConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is, e.g. `/1/url` for the `url` of the second output.
    public var pointer: JSONPointer
    /// What is wrong, e.g. `environment variable TOKEN is not set`.
    public var message: String

    /// Creates an error.
    public init(pointer: JSONPointer, message: String) {
        self.pointer = pointer
        self.message = message
    }

    /// `/1/url: environment variable TOKEN is not set`
    public var description: String {
        let location = pointer.description
        return location.isEmpty ? message : "\(location): \(message)"
    }

    /// The same error, located inside the element `index` of an array.
    package func inElement(_ index: Int) -> OutputConfigurationError {
        OutputConfigurationError(pointer: JSONPointer(tokens: [String(index)] + pointer.tokens), message: message)
    }
}
