@testable import AgentBase
@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing
@testable import AgentCore
@testable import AgentRuntime

/// `"tasks"` in the settings: read into definitions, and every problem reported at once with
/// its JSON pointer.
@Suite(.ownThreads) struct TaskSettingsTests {
    static func settings(_ tasks: String, modules: String = "[]") throws -> AgentSettings {
        AgentSettings(json: try JSONValue.parse(#"{"enabled_modules": \#(modules), "processes": {}, "tasks": \#(tasks)}"#), file: "settings.json")
    }

    static func messages(_ settings: AgentSettings) -> [String: String] {
        Dictionary(settings.hostIssues.map { ($0.pointer, $0.message) }, uniquingKeysWith: { a, b in a + " | " + b })
    }

    @Test func aCommandTaskIsReadWithItsPolicy() throws {
        let settings = try Self.settings(#"""
            {"backup": {"type": "command", "command": ["/usr/bin/python3", "job.py"], "cwd": "jobs", "env": {"MODE": "full"},
                        "timeout": 600, "retries": {"max": 3, "initial_delay": 5, "multiplier": 2, "max_delay": 300},
                        "max_concurrent": 2, "description": "Nightly backup", "input": {"type": "object"},
                        "on_event": {"type": "frequency_alert", "where": {"properties": {"count": {"minimum": 10}}}}},
             "line": {"type": "command", "command": "echo hi | wc -c", "shell": true}}
            """#)
        #expect(settings.hostIssues.isEmpty, "\(settings.hostIssues)")
        let backup = try #require(settings.tasks.first { $0.name == "backup" })
        #expect(backup.command == .init(arguments: ["/usr/bin/python3", "job.py"], directory: "jobs", environment: ["MODE": "full"]))
        #expect(backup.timeout == 600)
        #expect(backup.retries == .init(max: 3, initialDelay: 5, multiplier: 2, maxDelay: 300))
        #expect(backup.maxConcurrent == 2)
        #expect(backup.onEvent?.type == "frequency_alert")
        #expect(settings.tasks.first { $0.name == "line" }?.command == .init(arguments: ["echo hi | wc -c"], shell: true))
    }

    @Test func everyProblemIsReportedWithItsPointer() throws {
        let settings = try Self.settings(#"""
            {"nothing": {"type": "command"},
             "empty": {"type": "command", "command": []},
             "string": {"type": "command", "command": "ls -l"},
             "shellArray": {"type": "command", "command": ["a", "b"], "shell": true},
             "numbers": {"type": "command", "command": [1, 2]},
             "huge": {"type": "command", "command": ["/bin/true"], "timeout": 1e300, "retries": {"max": 1e20, "multiplier": 0.5}},
             "secret": {"type": "command", "command": ["/bin/true"], "env": {"TOKEN": "${env:AGENT_TEST_SURELY_UNSET_VARIABLE}"}},
             "schema": {"type": "command", "command": ["/bin/true"], "input": {"type": "no-such-type"}},
             "kind": {"type": "comand"},
             "bad name": {"type": "command", "command": ["/bin/true"]},
             "extra": {"type": "command", "command": ["/bin/true"], "retry": 3}}
            """#)
        let found = Self.messages(settings)
        #expect(found["/tasks/nothing"]?.contains("needs \"command\"") == true)
        #expect(found["/tasks/empty/command"]?.contains("empty array") == true)
        #expect(found["/tasks/string/command"]?.contains("\"shell\": true") == true)
        #expect(found["/tasks/shellArray/command"]?.contains("one shell line") == true)
        #expect(found["/tasks/numbers/command/0"] != nil)
        #expect(found["/tasks/huge/timeout"] != nil)
        #expect(found["/tasks/huge/retries/max"] != nil)
        #expect(found["/tasks/huge/retries/multiplier"] != nil)
        #expect(found["/tasks/secret/env/TOKEN"]?.contains("AGENT_TEST_SURELY_UNSET_VARIABLE is not set") == true)
        #expect(found["/tasks/schema/input"]?.contains("does not compile") == true)
        #expect(found["/tasks/kind/type"]?.contains("did you mean \"command\"") == true)
        #expect(found["/tasks/bad name"]?.contains("task name") == true)
        #expect(found["/tasks/extra"]?.contains("retry") == true)
        #expect(settings.tasks.isEmpty, "\(settings.tasks.map(\.name))")
    }

    @Test func limitsAreReadAndEachBadOneIsReportedAtItsPointer() throws {
        let good = try Self.settings(#"{"t": {"type": "command", "command": ["/bin/true"], "limits": {"memory": "512M", "cpu": 0.5}}, "u": {"type": "command", "command": ["/bin/true"], "limits": {"memory": 1073741824}}}"#)
        #expect(good.hostIssues.isEmpty, "\(good.hostIssues)")
        #expect(good.tasks.first { $0.name == "t" }?.limits == ResourceLimits(memoryBytes: 512 << 20, cpus: 0.5))
        #expect(good.tasks.first { $0.name == "u" }?.limits == ResourceLimits(memoryBytes: 1 << 30))
        let settings = try Self.settings(#"""
            {"unit": {"type": "command", "command": ["/bin/true"], "limits": {"memory": "12X"}},
             "small": {"type": "command", "command": ["/bin/true"], "limits": {"memory": 4096}},
             "huge": {"type": "command", "command": ["/bin/true"], "limits": {"memory": "99999999999T"}},
             "fraction": {"type": "command", "command": ["/bin/true"], "limits": {"memory": 1.5}},
             "idle": {"type": "command", "command": ["/bin/true"], "limits": {"cpu": 0}},
             "text": {"type": "command", "command": ["/bin/true"], "limits": {"cpu": "half"}},
             "disk": {"type": "command", "command": ["/bin/true"], "limits": {"disk": 10}},
             "empty": {"type": "command", "command": ["/bin/true"], "limits": {}},
             "module": {"type": "jobs.resize", "limits": {"memory": "1G"}}}
            """#)
        let found = Self.messages(settings)
        #expect(found["/tasks/unit/limits/memory"]?.contains("unit K, M, G or T (\"512M\"), found \"12X\"") == true, "\(found)")
        #expect(found["/tasks/small/limits/memory"]?.contains("a whole number of bytes from 1048576 (1M) up, or a string like \"512M\", found 4096") == true, "\(found)")
        #expect(found["/tasks/huge/limits/memory"]?.contains("at most 8E") == true, "\(found)")
        #expect(found["/tasks/fraction/limits/memory"] != nil, "\(found)")
        #expect(found["/tasks/idle/limits/cpu"] != nil, "\(found)")
        #expect(found["/tasks/text/limits/cpu"] != nil, "\(found)")
        #expect(found.keys.contains { $0.hasPrefix("/tasks/disk/limits") }, "\(found)")
        #expect(found["/tasks/empty/limits"] != nil, "\(found)")
        #expect(found["/tasks/module/limits"]?.contains("\"limits\" is for tasks of type \"command\"") == true, "\(found)")
        #expect(settings.tasks.isEmpty, "\(settings.tasks.map(\.name))")
    }

    /// A program sees a C string, which ends at its first NUL: `/bin/tr\u0000ue` ran `/bin/tr`;
    /// an argument, a folder or a variable was cut short, and a name with `=` made another variable.
    @Test func aNulInACommandAndABadVariableNameAreRefusedAtTheirPointers() throws {
        let settings = try Self.settings(#"""
            {"program": {"type": "command", "command": ["/bin/tr\u0000ue"]},
             "argument": {"type": "command", "command": ["/bin/echo", "a\u0000b"], "cwd": "jobs\u0000x"},
             "line": {"type": "command", "shell": true, "command": "echo a\u0000b"},
             "environment": {"type": "command", "command": ["/bin/true"], "env": {"ZZ": "a\u0000b", "A=B": "x", "": "y"}},
             "fine": {"type": "command", "command": ["/bin/echo", "tab\there"], "env": {"A_B": "c=d"}}}
            """#)
        let found = Self.messages(settings)
        #expect(found["/tasks/program/command/0"]?.contains("contains a NUL character") == true, "\(found)")
        #expect(found["/tasks/argument/command/1"]?.contains("NUL") == true, "\(found)")
        #expect(found["/tasks/argument/cwd"]?.contains("NUL") == true, "\(found)")
        #expect(found["/tasks/line/command"]?.contains("NUL") == true, "\(found)")
        #expect(found["/tasks/environment/env/ZZ"]?.contains("NUL") == true, "\(found)")
        #expect(found["/tasks/environment/env/A=B"]?.contains("no \"=\"") == true, "\(found)")
        #expect(found["/tasks/environment/env/"]?.contains("not empty") == true, "\(found)")
        #expect(found.keys.filter { $0.hasPrefix("/tasks/fine") }.isEmpty, "\(found)")
    }

    @Test func environmentValuesAreResolvedAndNeverShown() throws {
        setenv("AGENT_TASK_TEST_SECRET", "s3cret-value-1234", 1)
        defer { unsetenv("AGENT_TASK_TEST_SECRET") }
        let settings = try Self.settings(#"{"t": {"type": "command", "command": ["/bin/true"], "env": {"TOKEN": "Bearer ${env:AGENT_TASK_TEST_SECRET}"}}}"#)
        #expect(settings.hostIssues.isEmpty)
        #expect(settings.tasks.first?.command?.environment["TOKEN"] == "Bearer s3cret-value-1234")
    }

    @Test func hugeNumbersSaturateInsteadOfTrapping() {
        let (tasks, _) = TaskSettings.read(["t": ["type": "command", "command": ["/bin/true"], "timeout": 1e300, "max_concurrent": 1e300,
                                                 "retries": ["max": 1e300, "initial_delay": 1e300, "multiplier": 1e300, "max_delay": -5]]],
                                           environment: [:])
        let task = tasks.first
        #expect(task?.timeout == TaskSettings.longestTimeout)
        #expect(task?.maxConcurrent == TaskSettings.mostConcurrent)
        #expect(task?.retries.max == TaskSettings.mostRetries)
        #expect(task?.retries.maxDelay == 0)
    }

    static func manifest() throws -> ModuleManifest {
        var manifest = try ModuleManifest(json: #"""
            {"name": "jobs", "version": "1", "processes": [{"type": "feed", "kind": "datasource", "settings_schema": {"type": "object"}}]}
            """#, module: "jobs", file: "libjobs.so")
        manifest.processes.append(.init(type: "resize", kind: "task", description: "",
                                        settingsSchema: ["type": "object", "properties": ["width": ["type": "integer"]], "additionalProperties": false],
                                        subscribes: []))
        return manifest
    }

    @Test func aModuleTaskTypeMustBeATaskHandlerOfAnEnabledModule() throws {
        let settings = try Self.settings(#"""
            {"ok": {"type": "jobs.resize", "settings": {"width": 10}},
             "badSettings": {"type": "jobs.resize", "settings": {"width": "wide"}},
             "notEnabled": {"type": "photos.resize"},
             "noType": {"type": "jobs.rezise"},
             "notATask": {"type": "jobs.feed"},
             "commandKeys": {"type": "jobs.resize", "command": ["/bin/true"]}}
            """#, modules: #"["jobs"]"#)
        var validator = SettingsValidator()
        let report = validator.check(settings, modules: [ModuleLocation(name: "jobs", library: "libjobs.so", sourceDirectory: nil)],
                                     manifests: ["jobs": try Self.manifest()])
        let found = Dictionary(report.blockingIssues.map { ($0.pointer, $0.message) }, uniquingKeysWith: { a, b in a + " | " + b })
        #expect(found["/tasks/badSettings/settings/width"] != nil, "\(found)")
        #expect(found["/tasks/notEnabled/type"]?.contains("module \"photos\" is not enabled") == true)
        #expect(found["/tasks/noType/type"]?.contains("did you mean \"resize\"") == true)
        #expect(found["/tasks/notATask/type"]?.contains("is a datasource, not a task handler") == true)
        #expect(found["/tasks/commandKeys/command"] != nil)
        #expect(report.tasks.map(\.name) == ["ok"])
    }
}

/// `idle_timeout` and `cancel_grace` of a task: read, bounded, saturating, and used by the runners.
@Suite(.ownThreads) struct TaskGraceSettingsTests {
    @Test func idleTimeoutAndCancelGraceAreReadAndAnIdleTimeoutIsForModuleTasksOnly() throws {
        let settings = try TaskSettingsTests.settings(#"""
            {"cmd": {"type": "command", "command": ["/bin/true"], "cancel_grace": 0.5},
             "idle": {"type": "command", "command": ["/bin/true"], "idle_timeout": 30},
             "negative": {"type": "command", "command": ["/bin/true"], "cancel_grace": -1},
             "zero": {"type": "command", "command": ["/bin/true"], "cancel_grace": 0}}
            """#)
        let found = TaskSettingsTests.messages(settings)
        #expect(found["/tasks/idle/idle_timeout"]?.contains("for module tasks") == true, "\(found)")
        #expect(found["/tasks/negative/cancel_grace"] != nil, "\(found)")
        #expect(Set(found.keys) == ["/tasks/idle/idle_timeout", "/tasks/negative/cancel_grace"], "\(found)")
        #expect(settings.tasks.first { $0.name == "cmd" }?.cancelGrace == 0.5)
        #expect(settings.tasks.first { $0.name == "zero" }?.cancelGrace == 0)
        #expect(settings.tasks.first { $0.name == "cmd" }?.idleTimeout == nil)
    }

    @Test func hugeGracesAndIdleTimesSaturateInsteadOfTrapping() {
        let (tasks, _) = TaskSettings.read(["m": ["type": "jobs.resize", "idle_timeout": 1e300, "cancel_grace": 1e300],
                                            "tiny": ["type": "jobs.resize", "idle_timeout": 1e-300]], environment: [:])
        #expect(tasks.first { $0.name == "m" }?.idleTimeout == TaskSettings.longestTimeout)
        #expect(tasks.first { $0.name == "m" }?.cancelGrace == SettingsBounds.longestTimeout)
        #expect((tasks.first { $0.name == "tiny" }?.idleTimeout ?? 0) > 0)
        let problems = HostSchema.validator.validate(["enabled_modules": [], "processes": [:],
                                         "tasks": ["m": ["type": "command", "command": ["/bin/true"], "cancel_grace": 1e300, "idle_timeout": 0]]])
        #expect(Set(problems.map(\.instanceLocation)).isSuperset(of: ["/tasks/m/cancel_grace", "/tasks/m/idle_timeout"]), "\(problems)")
    }
}
