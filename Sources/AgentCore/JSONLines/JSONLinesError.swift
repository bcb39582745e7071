/// A line of the `jsonl/1` protocol that was refused: not JSON, not one frame, a member of the
/// wrong type, or too long. Says where (a JSON pointer into the line), what was expected and
/// what was found.
public struct JSONLinesError: Error, Equatable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not valid JSON.
        public static let notJSON = Code(rawValue: "not_json")
        /// JSON, but not an object with exactly one known member, or a member of the wrong shape.
        public static let malformed = Code(rawValue: "malformed_frame")
        /// Longer than the line limit.
        public static let tooLong = Code(rawValue: "line_too_long")
        /// A frame that the other side never sends (a program writing `start`).
        public static let wrongDirection = Code(rawValue: "wrong_direction")
    }

    public var code: Code
    /// Where in the line (a JSON pointer; empty: the whole line).
    public var pointer: String
    public var message: String

    public init(_ code: Code, at pointer: String = "", _ message: String) {
        self.code = code
        self.pointer = pointer
        self.message = message
    }

    public var description: String { pointer.isEmpty ? message : "\(pointer): \(message)" }
}
