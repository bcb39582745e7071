/// How a queued run's executor is chosen among the executors that take its task, have room
/// and carry the labels it requires (``ExecutorPool/choose(task:priority:require:avoid:strategy:now:)``).
///
/// Every strategy only ever picks an executor with room (running below its `max_concurrent`
/// overall and for the task): a run is never pushed into a full executor; it waits queued
/// until one has room.
public enum AssignmentStrategy: String, Sendable, CaseIterable, Equatable {
    /// The highest capability score — the executor's `priority_boost` for the task plus 1 when
    /// its `priority_preference` is the run's priority —; ties go to the least loaded
    /// (running / max_concurrent), then to the one given fewest runs so far.
    case bestFit = "best_fit"
    /// The lowest load (running / max_concurrent); ties go to the one given fewest runs so far.
    case loadBalanced = "load_balanced"
    /// The next executor in turn (per task) that has room: over a steady stream every executor
    /// gets the same number of runs, within one.
    case roundRobin = "round_robin"
    /// An executor whose `priority_preference` is the run's priority first, then the highest
    /// `priority_boost`, then the least loaded: executors kept for urgent work take it first.
    case priorityFirst = "priority_first"

    /// The strategy when none is chosen.
    public static let standard = AssignmentStrategy.bestFit

    /// Names, for error messages.
    package static let names = allCases.map(\.rawValue).joined(separator: ", ")
}
