/// A process that receives events (by type) and reacts: emits new events, sends messages
/// and alerts. Read events with `for await event in context.events { ... }`.
///
/// The event types come from ``subscribes``; a process's settings may replace them with the
/// host-level key `"subscribe": ["type", ...]`.
public protocol Monitor: AgentProcess {
    /// The event types this monitor receives by default (`"*"` means every type).
    static var subscribes: [String] { get }
    /// Queries over the event log the runtime runs periodically for this monitor; their rows
    /// arrive as `query:<name>` events.
    static var queries: [PeriodicQuery] { get }
}

extension Monitor {
    /// ``ProcessKind/monitor``.
    public static var kind: ProcessKind { .monitor }
    /// The types of ``subscribes``.
    public static var defaultSubscriptions: [String] { subscribes }
    /// None unless the monitor declares some.
    public static var queries: [PeriodicQuery] { [] }
    /// The monitor's ``queries``.
    public static var periodicQueries: [PeriodicQuery] { queries }
}
