import AgentBase
import JSONSchema

/// A run's input as memory holds it: the value, its compact JSON text, or — for a large input
/// whose text is known — the text alone, read again into a value only where one is asked for
/// (a command's `INPUT_*` and `{{input.…}}` at its start, a run shown whole).
///
/// A value costs far more than its text: a MiB of small numbers is ~13 MB of values, and 100
/// such runs queued, or 60 finished and kept among the recent, held over a GB. The text alone
/// is what the run journal, the store and a handler's frame take anyway.
package struct RunInput: Sendable {
    /// Inputs whose text is at least this many bytes are held as the text alone.
    package static let textOnlyFrom = 16 * 1024

    /// The thread large inputs' texts and values are made on, off the loop (a MiB of values
    /// written or read: tens of ms); a command run's large output is made there too.
    package static let textMaking = BlockingPool(name: "agent-run-texts", width: 1)

    private var tree: JSONValue?
    /// The compact JSON text, when it is known (made off the loop, where the run was asked for).
    package private(set) var text: [UInt8]?

    package init(_ value: JSONValue) { tree = value }

    /// The input. Read again from the text when it is held alone: keep the result rather than
    /// asking twice.
    package var value: JSONValue {
        if let tree { return tree }
        // The text is our own writer's, so it parses; an empty object only if it did not.
        guard let text, let parsed = try? JSONValue.parse(text) else { return .object([:]) }
        return parsed
    }

    /// Whether only the text is held (``value`` reads it each time).
    package var isTextOnly: Bool { tree == nil }

    /// The bytes of text held (0 when only the value is).
    package var textBytes: Int { text?.count ?? 0 }

    /// Gives the input's text (which must be ``value``'s): a large input then keeps the text
    /// alone, unless `keepingValue` (until ``compact()``: a run that may start at once, whose
    /// command would otherwise read the text again on the loop).
    package mutating func setText(_ bytes: [UInt8], keepingValue: Bool = false) {
        if tree == nil, text != nil { return }
        text = bytes
        if !keepingValue { compact() }
    }

    /// Keeps `value` (read from the text elsewhere) beside the text, until ``compact()``.
    package mutating func keep(_ value: JSONValue) {
        tree = value
    }

    /// Lets the value go when the text is large.
    package mutating func compact() {
        if let text, text.count >= Self.textOnlyFrom { tree = nil }
    }

    /// Lets the text go, unless it is all that is held (a small input kept for the recent runs,
    /// whose runner had its text).
    package mutating func dropText() {
        guard tree != nil else { return }
        text = nil
    }
}

extension RunInput: Equatable {
    /// Equal inputs, however each is held.
    package static func == (a: RunInput, b: RunInput) -> Bool {
        if let x = a.text, let y = b.text, x == y { return true }
        return a.value == b.value
    }
}
