/// Answers chat messages: the built-in `chatbot` process asks every configured adapter how
/// confident it is about a message and lets the most confident one reply.
///
/// Declared in the module manifest with kind `logic_adapter`, with its description, usage
/// examples and settings schema; a chatbot process lists it in its `logic_adapters` as
/// `"<module>.<type>"` (or `{"type": "<module>.<type>", ...settings}`).
public protocol LogicAdapter: Sendable {
    associatedtype Settings: Decodable & Sendable

    /// The name used in a chatbot's `logic_adapters`, e.g. `"trades_counter"`.
    static var typeName: String { get }
    /// What the adapter can answer, shown by the `features` adapter.
    static var description: String { get }
    /// Example questions, shown to users and used to score confidence.
    static var usageExamples: [String] { get }
    static var settingsSchema: Schema { get }

    init(settings: Settings) throws

    /// How confident the adapter is that it can answer `message`, in 0...1; nil lets the
    /// runtime score it from ``usageExamples`` against the other adapters' examples.
    func confidence(for message: String) -> Double?

    /// The answer to `message`; `context` reads the store.
    func respond(to message: String, context: AdapterContext) async throws -> String
}

extension LogicAdapter {
    /// nil: the runtime scores the adapter from its ``usageExamples``.
    public func confidence(for message: String) -> Double? { nil }
}
