import AgentBase
import AgentCommands
import AgentCore
import AgentSupervision
import AgentWork
import JSONSchema

/// What validating a settings file found: each module (loaded or not), each process (valid or
/// not, with its errors), and the processes ready to run.
public struct SettingsReport: Sendable {
    /// One enabled module.
    public struct Module: Sendable {
        public var name: String
        public var file: String
        public var version: String?
        public var processTypes: [String]
        public var error: ModuleLoadError?
        public var isAvailable: Bool { error == nil }
    }

    /// One configured process.
    public struct Process: Sendable {
        public var name: String
        public var type: String
        public var module: String?
        public var kind: String?
        public var enabled: Bool
        public var issues: [SettingsIssue]
        public var isValid: Bool { issues.isEmpty }
    }

    public var file: String
    public var modules: [Module]
    public var processes: [Process]
    /// Problems not tied to one process (top-level keys, enabled_modules).
    public var generalIssues: [SettingsIssue]
    /// Enabled, valid processes, ready for the supervisor.
    public var planned: [PlannedProcess]
    /// What a reload accepted but cannot apply to the running agent (said in its answer and
    /// the log), e.g. changed outputs, which take effect at the next start.
    public var reloadNotes: [String] = []
    /// The valid task definitions, ready for the ``TaskCoordinator``.
    public var tasks: [TaskDefinition] = []
    /// The `log` section: how a detached agent's log file is rotated (a reload applies it).
    public var log = LogSettings()
    /// The module task types the valid tasks use, by `"<module>.<type>"`.
    public var moduleTasks: [String: ModuleTaskType] = [:]
    /// The valid schedules (their task among ``tasks``), ready for the ``Scheduler``.
    public var schedules: [ScheduleDefinition] = []
    /// The executors (each replica of each valid `"executor"` process), for the ``TaskCoordinator``.
    public var executors: [ExecutorDefinition] = []
    /// `"assignment"`: the strategies and the aging interval.
    public var assignment = AssignmentSettings()
    /// The valid workflows (their tasks among ``tasks``), ready for the ``WorkflowEngine``.
    public var workflows: [WorkflowDefinition] = []
    /// The HTTP users and named tokens with their role: who may answer a workflow's approval
    /// (a reload applies it at once, as it does the HTTP tokens and users).
    public var httpRoles: [String: String] = [:]
    /// `"http"`: a reload puts its tokens and users in force at once (the rest waits for a restart).
    public var http: HTTPSettings?
    /// `"events"`: what events published from outside may be (a reload applies it).
    public var events = EventSettings()

    /// Problems that keep the agent from starting: general ones, modules that failed to load,
    /// and problems of enabled processes. (Disabled processes are checked and reported, but
    /// do not block.)
    public var blockingIssues: [SettingsIssue] {
        generalIssues.filter { $0.followsFrom == nil }
            + modules.compactMap { module in
                module.error.map { SettingsIssue(file: file, pointer: "/enabled_modules", message: $0.description) }
            }
            + processes.filter(\.enabled).flatMap(\.issues).filter { $0.followsFrom == nil }
    }

    public var isValid: Bool { blockingIssues.isEmpty }

    /// The processes the settings list with `"enabled": false`, as `status` shows them.
    public var disabledProcesses: [DisabledProcess] {
        processes.filter { !$0.enabled }.map { DisabledProcess(name: $0.name, type: $0.type, module: $0.module) }
    }
}
