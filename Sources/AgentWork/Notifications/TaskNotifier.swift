import AgentLoop
import AgentOutputs
import Foundation
import JSONSchema
import Logging

/// Tells people about task runs: an email (SMTP over libcurl) and a JSON record to the
/// agent's outputs when a run fails — and, if a task asks, when an attempt will be retried
/// and when a run succeeds. What is sent is configured per task (`"notify"`) over the
/// agent-wide `"notifications"` defaults.
///
/// The work layer calls ``runEnded(task:runID:attempt:outcome:willRetry:time:)`` on the loop
/// thread when an attempt ends; it returns at once. Emails go out on a thread of their own
/// from a bounded queue (``NotificationDelivery``); a notification that cannot be delivered is
/// logged (without secrets) and counted in ``statistics``, and never changes the run's result
/// nor holds up the next run.
@LoopActor
public final class TaskNotifier {
    private let defaults: JSONValue?
    /// The agent's outputs, for `"outputs"` (loop thread; the supervisor sets them when they
    /// are created, which may be after the tasks).
    public var outputs: OutputHub? {
        didSet {
            outputNames = outputs.map { Set($0.statistics.map(\.name)) }
            settingsCache = [:]
        }
    }
    private var outputNames: Set<String>?
    private let agentName: String
    private let hostName: String
    private let agentDirectory: String
    private let environment: [String: String]
    private let logger: Logger
    private let delivery: NotificationDelivery
    /// Per task: its `notify` as last seen and what it was read as (loop thread only).
    private var settingsCache: [String: (notify: JSONValue?, settings: NotificationSettings?)] = [:]

    /// - Parameters:
    ///   - defaults: The settings' `"notifications"` (nil: none), valid per ``settingsSchema``.
    ///   - outputs: The agent's outputs, for `"outputs"` (nil: none configured).
    ///   - agentName: Shown in subjects and records (the agent's folder name, say).
    ///   - agentDirectory: Relative `ca_file` paths are taken from it.
    public init(defaults: JSONValue?, outputs: OutputHub?, agentName: String, hostName: String = TaskNotifier.currentHostName(),
                agentDirectory: String, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.defaults = defaults
        self.outputs = outputs
        outputNames = outputs.map { Set($0.statistics.map(\.name)) }
        self.agentName = agentName
        self.hostName = hostName
        self.agentDirectory = agentDirectory
        self.environment = environment
        self.logger = logger
        delivery = NotificationDelivery(capacity: defaults?["queue"]?.numberValue?.intValue ?? NotificationSettings.defaultQueue, logger: logger)
    }

    deinit {
        delivery.stop(timeout: 0)
    }

    /// An attempt of run `runID` ended with `outcome` at `time`; `willRetry`: another attempt
    /// follows; `interruptions`: the run's attempts interrupted from outside, which its retry
    /// policy does not count (so attempt 4 of 3 retries plus one interruption is "4 of 4").
    /// Sends what the task's settings ask for; returns at once (loop thread).
    package func runEnded(task: TaskDefinition, runID: String, attempt: Int, interruptions: Int = 0, outcome: TaskRunOutcome, willRetry: Bool, time: Date) {
        let trigger: NotificationSettings.Trigger
        switch outcome.status {
        case .succeeded: trigger = .success
        case .cancelled: return  // someone asked for it: nobody to tell
        case .failed, .timedOut, .interrupted: trigger = willRetry ? .retry : .failure
        }
        guard let settings = settings(for: task), settings.triggers.contains(trigger) else { return }
        let notification = TaskNotification(
            trigger: trigger, task: task.name, description: task.description, runID: runID, attempt: attempt,
            maxAttempts: max(attempt, task.retries.max + 1 + interruptions), willRetry: willRetry, outcome: outcome, time: time,
            agent: agentName, host: hostName)
        if let outputs, settings.outputs != .none {
            let record = OutputRecord.event(
                source: RuntimeEvent.taskNotification.source, type: RuntimeEvent.taskNotification.type, payload: notification.jsonValue.serializedBytes(),
                time: Int64((time.timeIntervalSince1970 * 1e9).rounded()))
            switch settings.outputs {
            case .all: outputs.publish(record)
            case .named(let names): outputs.publish(record, toOutputsNamed: names)
            case .none: break
            }
            delivery.count { $0.recordsPublished += 1 }
        }
        if let email = settings.email {
            delivery.enqueue(NotificationDelivery.Job(notification: notification, email: email))
        }
    }

    /// What became of the notifications so far.
    public var statistics: NotificationStatistics { delivery.statistics }

    /// Lets queued emails go out for at most `timeout` seconds, then drops (and counts) the
    /// rest. Returns whether none was left. Call it before the outputs stop.
    @discardableResult
    public func stop(timeout: Double) -> Bool {
        delivery.stop(timeout: timeout)
    }

    /// The machine's name (gethostname), for subjects and records.
    nonisolated public static func currentHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func settings(for task: TaskDefinition) -> NotificationSettings? {
        if let cached = settingsCache[task.name], cached.notify == task.notify { return cached.settings }
        var settings: NotificationSettings?
        if let merged = NotificationSettings.merged(task: task.notify, defaults: defaults) {
            var issues: [(pointer: String, message: String)] = []
            let origins = NotificationSettings.Origins(task: task.notify, taskPointer: "/tasks/\(JSONPointer.escape(task.name))/notify")
            settings = NotificationSettings.read(merged, origins: origins, agentDirectory: agentDirectory, outputNames: outputNames,
                                                 environment: environment, issues: &issues)
            if !issues.isEmpty {
                // Validation refuses these before the agent starts; an environment variable
                // unset since then can still get here.
                delivery.count { $0.settingsErrors += 1 }
                logger.error("task \(task.name): its notifications are off: \(issues.map { "\($0.pointer): \($0.message)" }.joined(separator: "; "))")
            }
        }
        settingsCache[task.name] = (task.notify, settings)
        return settings
    }
}

extension TaskNotifier {
    /// The JSON Schema of a task's `"notify"` (for the tasks' schema in ``HostSchema``).
    nonisolated public static var notifySchema: JSONValue { NotificationSettings.taskSchema }

    /// The JSON Schema of the settings' top-level `"notifications"`.
    nonisolated public static var settingsSchema: JSONValue { NotificationSettings.defaultsSchema }

    /// Every problem of `"notifications"` and of each task's `"notify"` in `document` (the
    /// whole settings) that the schemas cannot see: URL schemes, missing `from`/`to`, a
    /// password written in the file instead of `${env:NAME}`, unset environment variables,
    /// templates that do not compile, outputs that do not exist. Pointers are the keys' own.
    nonisolated public static func settingsIssues(
        _ document: JSONValue, agentDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [(pointer: String, message: String)] {
        let defaults = document["notifications"]
        let outputNames = (try? OutputConfiguration.list(json: document["outputs"] ?? [], environment: environment)).map { Set($0.map(\.name)) }
        var issues: [(pointer: String, message: String)] = []
        if let defaults, defaults.objectValue != nil {
            _ = NotificationSettings.read(defaults, origins: .init(task: defaults, taskPointer: "/notifications"), partial: true,
                                          agentDirectory: agentDirectory, outputNames: outputNames, environment: environment, issues: &issues)
        }
        for (name, task) in document["tasks"]?.objectValue ?? [:] {
            let notify = task["notify"]
            guard let merged = NotificationSettings.merged(task: notify, defaults: defaults) else { continue }
            var own: [(pointer: String, message: String)] = []
            let origins = NotificationSettings.Origins(task: notify, taskPointer: "/tasks/\(JSONPointer.escape(name))/notify")
            _ = NotificationSettings.read(merged, origins: origins, agentDirectory: agentDirectory, outputNames: outputNames,
                                          environment: environment, issues: &own)
            // What is wrong in the defaults themselves was reported once, above.
            issues += own.filter { !($0.pointer == "/notifications" || $0.pointer.hasPrefix("/notifications/")) }
        }
        return issues
    }
}
