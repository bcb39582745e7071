/// An edit that ``JSONTextEditor`` cannot make: where (a JSON pointer into the document), what
/// was expected and what was found.
public struct JSONEditError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A stable code: `no_such_value`, `not_an_object`, `not_an_array`, `no_such_member`,
    /// `no_such_item`, `invalid_pointer`.
    public var code: String
    /// The JSON pointer the edit was aimed at.
    public var pointer: String
    /// What is wrong.
    public var message: String

    public init(code: String, pointer: String, message: String) {
        self.code = code
        self.pointer = pointer
        self.message = message
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
}
