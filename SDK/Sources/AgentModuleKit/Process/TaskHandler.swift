/// Work that runs to completion: a task type a module provides (ABI 2, `"kind": "task"`).
///
/// A task in the agent's settings (`"tasks": {"count": {"type": "sample.word_count"}}`) runs
/// its runs in an executor worker of the module: the handler is made once per executor from
/// the task's settings, then ``run(input:context:)`` is called for each run, several at once
/// up to the task's `max_concurrent`. The input is decoded from the run's JSON (a field that
/// does not decode fails the run, naming it); the output is encoded to JSON.
///
/// ```swift
/// struct WordCount: TaskHandler {
///     struct Settings: Decodable, Sendable {}
///     struct Input: Decodable, Sendable { var text: String }
///     struct Output: Encodable, Sendable { var words: Int }
///     static let typeName = "word_count"
///     static let description = "Counts the words of a text."
///     static var inputSchema: Schema { .object(["text": .string()], required: ["text"]) }
///     init(settings: Settings) {}
///     func run(input: Input, context: TaskContext) async throws -> Output {
///         Output(words: input.text.split(whereSeparator: \.isWhitespace).count)
///     }
/// }
/// ```
public protocol TaskHandler: Sendable {
    /// The task's settings (its `"settings"` in the task definition), decoded once.
    associatedtype Settings: Decodable & Sendable
    /// A run's input.
    associatedtype Input: Decodable & Sendable
    /// A run's output.
    associatedtype Output: Encodable & Sendable

    /// The name used after the module's in a task's `"type"`, e.g. `"word_count"` for
    /// `"sample.word_count"`.
    static var typeName: String { get }
    /// One sentence that says what a run does; shown by `agent-control task list`.
    static var description: String { get }
    /// The JSON Schema of ``Input``: requests whose input does not match it are refused with
    /// pointers before a run is queued, and its defaults are filled in before decoding.
    static var inputSchema: Schema { get }
    /// The JSON Schema of ``Output``, for documentation (nil: not declared).
    static var outputSchema: Schema? { get }
    /// The JSON Schema of ``Settings``.
    static var settingsSchema: Schema { get }
    /// Seconds a run may go without ``TaskContext/heartbeat()`` (or a progress report) before
    /// the runtime kills its worker and fails the run (nil: no watchdog). Declare it for
    /// handlers that could hang.
    static var heartbeatTimeout: Double? { get }

    /// Creates the handler from the task's settings. Throw to refuse settings the schema cannot
    /// express; the message is shown to the user.
    init(settings: Settings) throws

    /// Carries out one run. Throwing fails the run with the error's description; when the run
    /// is cancelled (or timed out) the Swift task is cancelled, and the handler should return
    /// or throw soon after.
    func run(input: Input, context: TaskContext) async throws -> Output
}

extension TaskHandler {
    /// None: the output is not checked.
    public static var outputSchema: Schema? { nil }
    /// None: the runtime does not expect heartbeats from the handler.
    public static var heartbeatTimeout: Double? { nil }
}

extension TaskHandler where Settings == NoSettings {
    /// An empty object: a handler without settings takes none.
    public static var settingsSchema: Schema { .object([:]) }
}

/// The settings of a task handler that takes none.
public struct NoSettings: Decodable, Sendable {
    /// No settings.
    public init() {}
}
