import AgentBase
import AgentCore
import Foundation
import JSONSchema

/// The settings' `"schedules"`: name → ``ScheduleDefinition``.
///
/// The host schema checks the shapes; ``read(_:)`` what a schema cannot say (exactly one of
/// `cron`, `every`, `at`; the cron expression, naming its field and part; the time zone; the
/// `at` time). That the target task exists and the input passes its schema is checked by the
/// ``SettingsValidator`` once the tasks are resolved (see ``check(_:tasks:definedTasks:)``).
package enum ScheduleSettings {
    /// `every` at least (seconds): a second.
    package static let shortestPeriod: Double = 1
    /// `max_catch_up` at most.
    package static let mostCatchUp = 100_000

    /// The schema of `"schedules"` (part of ``HostSchema``).
    package static let schema: JSONValue = [
        "description": "Schedules: tasks run on a calendar (cron), every N seconds, or once at a time. Name → schedule.",
        "type": "object",
        "additionalProperties": [
            "type": "object",
            "required": ["run"],
            "additionalProperties": false,
            "properties": [
                "cron": ["type": "string", "minLength": 1,
                         "description": "Five fields (minute hour day-of-month month day-of-week), or six with seconds first; names, lists, ranges, steps; @hourly, @daily, @weekly, @monthly, @yearly, @reboot."],
                "every": ["type": "number", "minimum": SettingsBounds.json(shortestPeriod), "maximum": SettingsBounds.json(SettingsBounds.longestRetention),
                          "description": "Fire every so many seconds, at the multiples of it since the Unix epoch (every: 60 fires on each minute)."],
                "at": ["type": "string", "minLength": 1,
                       "description": "Fire once at this time: ISO 8601 with an offset (2026-11-25T02:00:00Z), or a local time (2026-11-25T02:00:00) in \"timezone\"."],
                "timezone": ["type": "string", "minLength": 1, "description": "A tz database zone (Europe/Berlin) for cron fields and a local \"at\"; default: the system's."],
                "run": [
                    "type": "object", "additionalProperties": false,
                    "description": "What each fire runs: a task or a workflow (exactly one of the two), with an input.",
                    "properties": [
                        "task": ["type": "string", "minLength": 1, "description": "The task (under \"tasks\") each fire runs."],
                        "workflow": ["type": "string", "minLength": 1, "description": "The workflow (under \"workflows\") each fire starts a run of."],
                        "input": ["description": "The run's input (default {}), checked against the task's or the workflow's input schema."],
                    ],
                ],
                "catch_up": ["enum": .array(ScheduleDefinition.CatchUp.allCases.map { .string($0.rawValue) }), "default": "one",
                             "description": "Fire times missed while the agent was down: none (recorded as missed), one (folded into one run), all (one run each, up to max_catch_up within catch_up_window)."],
                "max_catch_up": ["type": "integer", "minimum": 1, "maximum": SettingsBounds.json(mostCatchUp), "default": 10,
                                 "description": "catch_up all: runs at most for the missed times (the newest; the older ones are recorded as missed)."],
                "catch_up_window": ["type": "number", "exclusiveMinimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestRetention),
                                    "description": "Seconds: missed times older than this are recorded as missed, not caught up. Default: no limit."],
                "overlap": ["enum": .array(ScheduleDefinition.Overlap.allCases.map { .string($0.rawValue) }), "default": "skip",
                            "description": "A fire while the schedule's previous run still goes: skip, queue (one waits), replace (cancel the old run), allow."],
                "jitter": ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 0,
                           "description": "Each fire waits a random delay of up to this many seconds."],
                "enabled": ["type": "boolean", "default": true, "description": "false: the schedule never fires (unlike `schedule pause`, a state kept in the store that `schedule resume` undoes)."],
                "description": ["type": "string", "description": "What the schedule is for, for people."],
            ],
        ],
    ]

    /// The schedules in `json` (entries the host schema refused are skipped) and the problems
    /// the schema cannot see, with their pointers.
    package static func read(_ json: JSONValue?) -> (schedules: [ScheduleDefinition], issues: [(pointer: String, message: String)]) {
        var schedules: [ScheduleDefinition] = []
        var issues: [(pointer: String, message: String)] = []
        for (name, value) in (json?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let pointer = "/schedules/" + JSONPointer.escape(name)
            var problems: [(pointer: String, message: String)] = []
            if let problem = PlainName.problem(name, what: "schedule name") { problems.append((pointer, problem)) }
            guard let object = value.objectValue, let run = object["run"]?.objectValue else {
                issues += problems
                continue
            }
            let task = run["task"]?.stringValue, workflow = run["workflow"]?.stringValue
            if (task == nil) == (workflow == nil) {
                if run["task"] == nil, run["workflow"] == nil {
                    problems.append((pointer + "/run", "expected \"task\" (a task of \"tasks\") or \"workflow\" (a workflow of \"workflows\"): what each fire runs; found neither"))
                } else if task != nil {
                    problems.append((pointer + "/run", "a schedule runs a task or starts a workflow, not both; found \"task\" and \"workflow\" (keep one)"))
                }
                // A key of the wrong type is the host schema's report.
                issues += problems
                continue
            }
            var zone = TimeZone.current
            if let identifier = object["timezone"]?.stringValue {
                if let offset = Self.offsetSpelling(identifier) {
                    problems.append((pointer + "/timezone", "\"\(identifier)\" is an offset, not a name of the tz database (Foundation reads it as \(offset), POSIX TZ as the opposite); name a zone (\"Europe/Berlin\"), or a fixed offset as the tz database does (\"Etc/GMT\(offset.hasPrefix("+") ? "-" : "+")\(offset.dropFirst().split(separator: ":")[0].drop { $0 == "0" })\" is \(offset): its sign is inverted)"))
                } else if let named = TimeZone(identifier: identifier) {
                    zone = named
                } else {
                    let known = TimeZone.knownTimeZoneIdentifiers
                    problems.append((pointer + "/timezone", "unknown time zone \"\(identifier)\"\(Suggestions.hint(for: identifier, in: known)); expected a name of the tz database such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\""))
                }
            }
            let given = ["cron", "every", "at"].filter { object[$0] != nil }
            var timing: ScheduleTiming?
            if given.count != 1 {
                problems.append((pointer, given.isEmpty
                    ? "a schedule needs one of \"cron\" (e.g. \"0 3 * * *\"), \"every\" (seconds) or \"at\" (an ISO 8601 time)"
                    : "a schedule has one of \"cron\", \"every\" and \"at\"; found \(given.map { "\"\($0)\"" }.joined(separator: " and "))"))
            } else if let text = object["cron"]?.stringValue {
                do throws(CronExpressionError) {
                    let expression = try CronExpression(parsing: text)
                    if !expression.isReboot, !expression.canFire {
                        problems.append((pointer + "/cron", "the cron expression \"\(text)\" never fires: no month it names has the day of month it names (February has 29 days at most, April, June, September and November 30); name a day that exists, or a day of the week"))
                    } else {
                        timing = .cron(expression)
                    }
                } catch {
                    problems.append((pointer + "/cron", "invalid cron expression \"\(text)\": \(error.field) \"\(error.part)\": \(error.message)"))
                }
            } else if let seconds = object["every"]?.numberValue?.doubleValue, seconds.isFinite {
                timing = .every(min(max(seconds, shortestPeriod), SettingsBounds.longestRetention))
            } else if let text = object["at"]?.stringValue {
                switch AtTime.parse(text, zone: zone) {
                case .success(let time): timing = .at(time)
                case .failure(let problem): problems.append((pointer + "/at", problem.message))
                }
            }
            guard problems.isEmpty, let timing else {
                issues += problems
                continue
            }
            var schedule = ScheduleDefinition(name: name, timing: timing, timeZone: zone, task: task ?? "", input: run["input"] ?? .object([:]))
            schedule.workflow = workflow
            if let policy = object["catch_up"]?.stringValue.flatMap(ScheduleDefinition.CatchUp.init(rawValue:)) { schedule.catchUp = policy }
            if let count = object["max_catch_up"]?.numberValue {
                schedule.maxCatchUp = min(max(count.intValue ?? Int(saturating: count.doubleValue), 1), mostCatchUp)
            }
            if let window = object["catch_up_window"]?.numberValue?.doubleValue, window.isFinite, window > 0 {
                schedule.catchUpWindow = min(window, SettingsBounds.longestRetention)
            }
            if let policy = object["overlap"]?.stringValue.flatMap(ScheduleDefinition.Overlap.init(rawValue:)) { schedule.overlap = policy }
            if let jitter = object["jitter"]?.numberValue?.doubleValue, jitter.isFinite {
                schedule.jitter = min(max(jitter, 0), SettingsBounds.longestTimeout)
            }
            schedule.enabled = object["enabled"]?.boolValue ?? true
            schedule.description = object["description"]?.stringValue ?? ""
            schedules.append(schedule)
        }
        return (schedules, issues)
    }

    /// The offset (`+05:00`) that a zone spelled `GMT+5`, `UTC-03:30` or `UTC+0530` stands for in
    /// Foundation, which takes these though no tz database has them; nil for any other text, and
    /// for an offset of zero (`GMT+0` is a tz database name).
    static func offsetSpelling(_ identifier: String) -> String? {
        let upper = identifier.uppercased()
        guard upper.hasPrefix("GMT") || upper.hasPrefix("UTC"), let sign = upper.dropFirst(3).first, sign == "+" || sign == "-",
              let zone = TimeZone(identifier: identifier) else { return nil }
        let seconds = zone.secondsFromGMT()
        // GMT+0 and GMT-0 are tz database names, and no sign to get wrong.
        guard seconds != 0 else { return nil }
        return String(format: "%@%02d:%02d", seconds < 0 ? "-" : "+", abs(seconds) / 3600, abs(seconds) % 3600 / 60)
    }

    /// What needs the resolved tasks and workflows: the target exists (`definedTasks`,
    /// `definedWorkflows`: every name under `"tasks"` / `"workflows"`, valid or not) and the
    /// input passes its input schema.
    package static func check(_ schedules: [ScheduleDefinition], tasks: [TaskDefinition], definedTasks: Set<String>,
                      workflows: [WorkflowDefinition] = [], definedWorkflows: Set<String> = [])
        -> (valid: [ScheduleDefinition], issues: [(pointer: String, message: String, followsFrom: String?)])
    {
        let tasksByName = Dictionary(tasks.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let workflowsByName = Dictionary(workflows.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var valid: [ScheduleDefinition] = []
        var issues: [(pointer: String, message: String, followsFrom: String?)] = []
        for schedule in schedules {
            let pointer = "/schedules/" + JSONPointer.escape(schedule.name) + "/run"
            let (kind, name, section) = schedule.workflow.map { ("workflow", $0, "workflows") } ?? ("task", schedule.task, "tasks")
            let defined = schedule.workflow == nil ? definedTasks : definedWorkflows
            let schema: JSONValue?
            if let workflow = schedule.workflow {
                guard let definition = workflowsByName[workflow] else {
                    issues.append(missing(kind, name, section, defined: defined, at: pointer))
                    continue
                }
                schema = definition.inputSchema
            } else {
                guard let task = tasksByName[schedule.task] else {
                    issues.append(missing(kind, name, section, defined: defined, at: pointer))
                    continue
                }
                schema = task.inputSchema
            }
            if let problem = InputSize.problem(schedule.input) {
                issues.append((pointer + "/input", problem.message, nil))
                continue
            }
            if let schema, let validator = try? JSONSchemaValidator(schema: schema) {
                let problems = validator.validate(schedule.input)
                if !problems.isEmpty {
                    issues += problems.map { (pointer + "/input" + $0.instanceLocation, "does not match the input schema of \(kind) \"\(name)\": \($0.message)", nil) }
                    continue
                }
            }
            valid.append(schedule)
        }
        return (valid, issues)
    }

    /// The problem of a target that is not among the valid tasks or workflows: invalid (its
    /// own errors are reported where it is) or unknown (with a "did you mean").
    private static func missing(_ kind: String, _ name: String, _ section: String, defined: Set<String>, at pointer: String)
        -> (pointer: String, message: String, followsFrom: String?)
    {
        let target = "/\(section)/" + JSONPointer.escape(name)
        if defined.contains(name) {
            return (pointer + "/" + kind, "the \(kind) \"\(name)\" is invalid (see \(target))", target)
        }
        let names = defined.sorted()
        return (pointer + "/" + kind, "unknown \(kind) \"\(name)\"\(Suggestions.hint(for: name, in: names)); \(section): \(names.isEmpty ? "none (define it under \"\(section)\")" : names.joined(separator: ", "))", nil)
    }
}
