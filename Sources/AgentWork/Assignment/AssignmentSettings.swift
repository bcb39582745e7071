/// `"assignment"` of the settings: the agent's strategy, each task's, and the aging interval
/// (read by ``ExecutorSettings/readAssignment(_:)``).
public struct AssignmentSettings: Equatable, Sendable {
    public var strategy: AssignmentStrategy = .standard
    /// Task name → its own strategy.
    public var tasks: [String: AssignmentStrategy] = [:]
    /// Seconds of waiting worth one priority step (``RunQueue``).
    public var agingInterval = Self.defaultAgingInterval

    /// 60 s: a `low` run is overtaken by `high` ones for at most 2 minutes.
    public static let defaultAgingInterval = 60.0

    public init() {}
}
