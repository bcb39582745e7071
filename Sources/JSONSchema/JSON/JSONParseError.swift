/// A syntax error found while parsing JSON text, with its 1-based position.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line of the offending character.
    public var line: Int
    /// 1-based column (in Unicode scalars) of the offending character.
    public var column: Int
    /// Byte offset of the offending character from the start of the input.
    public var offset: Int
    /// What was expected and what was found, e.g. `expected ',' or '}' after object member, found 'x'`.
    public var message: String

    /// Creates a parse error.
    public init(line: Int, column: Int, offset: Int, message: String) {
        self.line = line
        self.column = column
        self.offset = offset
        self.message = message
    }

    /// `line L, column C: message`.
    public var description: String { "line \(line), column \(column): \(message)" }
}
