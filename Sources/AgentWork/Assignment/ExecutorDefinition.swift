/// One executor as the settings declare it (a replica of a `"type": "executor"` process is
/// one executor each): the tasks it takes and how many runs it carries at once.
///
/// ```json
/// "processes": {"crunchers": {"type": "executor", "replicas": 4, "max_concurrent": 8,
///                             "tasks": {"word_count": {"priority_boost": 2, "max_concurrent": 2}, "backup": {}},
///                             "priority_preference": "high", "labels": {"gpu": "yes"}}}
/// ```
public struct ExecutorDefinition: Equatable, Sendable {
    /// What the executor can do for one task.
    public struct Capability: Equatable, Sendable {
        /// Added to the executor's score for runs of the task (best_fit, priority_first).
        public var priorityBoost: Int
        /// Runs of the task at once on this executor (nil: only the executor's own limit).
        public var maxConcurrent: Int?

        public init(priorityBoost: Int = 0, maxConcurrent: Int? = nil) {
            self.priorityBoost = priorityBoost
            self.maxConcurrent = maxConcurrent
        }
    }

    /// The executor's name: the process's name, or `name#N` for its N-th replica.
    public var name: String
    /// The `"processes"` entry that declares it.
    public var process: String
    /// Task name → capability.
    public var tasks: [String: Capability]
    /// Runs at once, whatever their task.
    public var maxConcurrent: Int
    /// The priority it prefers (nil: none).
    public var priorityPreference: TaskRun.Priority?
    /// Matched by the labels a task or run requires (every required label, same value).
    public var labels: [String: String]
    /// A person (an HTTP user) who carries the runs out by hand (`task complete`), or nil.
    public var user: String?
    /// People by role: any HTTP user of this role (`read`, `admin`) carries the runs out, or nil.
    public var role: String?
    /// Who may complete its runs: `user`, or the users of `role` when the settings were read.
    public var people: [String]

    /// Whether its runs wait for a person (`user` or `role`) rather than a runner.
    public var isPerson: Bool { user != nil || role != nil }

    public init(name: String, process: String? = nil, tasks: [String: Capability], maxConcurrent: Int = 1,
                priorityPreference: TaskRun.Priority? = nil, labels: [String: String] = [:], user: String? = nil,
                role: String? = nil, people: [String]? = nil) {
        self.name = name
        self.process = process ?? name
        self.tasks = tasks
        self.maxConcurrent = maxConcurrent
        self.priorityPreference = priorityPreference
        self.labels = labels
        self.user = user
        self.role = role
        self.people = people ?? user.map { [$0] } ?? []
    }
}
