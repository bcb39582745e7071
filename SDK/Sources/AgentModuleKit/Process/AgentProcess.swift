/// What every process type a module provides has in common.
///
/// Module authors conform to ``Datasource`` or ``Monitor`` rather than to this protocol
/// directly. A process type is instantiated once per configured process, in its own worker
/// process, with its settings decoded from `settings.json` (host-level keys removed and the
/// schema's defaults filled in).
public protocol AgentProcess: Sendable {
    /// The settings of one process of this type, decoded from its JSON settings.
    associatedtype Settings: Decodable & Sendable

    /// The name used as `"type"` in `settings.json`, e.g. `"trade_feed"`.
    static var typeName: String { get }
    /// One sentence that says what the process does; shown by `agent-control` and the chatbot.
    static var description: String { get }
    /// The JSON Schema of ``Settings``. Objects reject unknown properties by default.
    static var settingsSchema: Schema { get }
    /// The kind of process; supplied by ``Datasource`` and ``Monitor``.
    static var kind: ProcessKind { get }
    /// Event types a process of this type receives unless its settings say otherwise.
    static var defaultSubscriptions: [String] { get }
    /// Queries the runtime runs periodically for the process (monitors declare them).
    static var periodicQueries: [PeriodicQuery] { get }

    /// Creates the process from its settings. Throw to refuse settings that the schema cannot
    /// express; the message is shown to the user.
    init(settings: Settings) throws

    /// Runs until the work is done or the task is cancelled (the host asked it to stop).
    /// Throwing `CancellationError` after a stop request counts as a normal end.
    func run(context: ProcessContext) async throws
}

extension AgentProcess {
    /// None: a process receives events only when it declares it (``Monitor`` does).
    public static var defaultSubscriptions: [String] { [] }
    /// None: only a ``Monitor`` has periodic queries.
    public static var periodicQueries: [PeriodicQuery] { [] }
}

/// The kind of a process type, as written in the module manifest.
public struct ProcessKind: Hashable, Sendable, CustomStringConvertible {
    /// The manifest spelling: `datasource`, `monitor`, `logic_adapter` or `task`.
    public let rawValue: String

    /// Produces events.
    public static let datasource = ProcessKind(rawValue: "datasource")
    /// Receives events and reacts to them.
    public static let monitor = ProcessKind(rawValue: "monitor")
    /// Answers chat messages (used by the chatbot process).
    public static let logicAdapter = ProcessKind(rawValue: "logic_adapter")
    /// Runs work to completion on request (see ``TaskHandler``).
    public static let task = ProcessKind(rawValue: "task")

    public var description: String { rawValue }
}
