/// A syntax error found while parsing JSON text, with its 1-based position and the JSON
/// pointer of the value at fault.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line of the offending character.
    public var line: Int
    /// 1-based column (in Unicode scalars) of the offending character.
    public var column: Int
    /// Byte offset of the offending character from the start of the input.
    public var offset: Int
    /// What was expected and what was found, e.g. `expected ',' or '}' after object member, found 'x'`.
    public var message: String
    /// The JSON pointer of the value the error is in (`""`: the document itself); for a
    /// repeated key, the pointer of its member (`/command`).
    public var pointer: String

    /// Creates a parse error.
    public init(line: Int, column: Int, offset: Int, message: String, pointer: String = "") {
        self.line = line
        self.column = column
        self.offset = offset
        self.message = message
        self.pointer = pointer
    }

    /// `line L, column C: message`.
    public var description: String { "line \(line), column \(column): \(message)" }

    /// The error as seen from the container that holds the value at fault under `token`.
    func within(_ token: String) -> JSONParseError {
        var outer = self
        outer.pointer = "/" + JSONPointer.escape(token) + pointer
        return outer
    }
}
