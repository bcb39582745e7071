import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentCore
@testable import AgentRuntime

/// Processes of type "executor" and `"assignment"` in the settings: read into executors (one per
/// replica), every problem at its JSON pointer.
@Suite(.ownThreads) struct ExecutorSettingsTests {
    static func report(_ processes: String, assignment: String = "{}", extraTasks: String = "") throws -> SettingsReport {
        let text = #"""
            {"enabled_modules": [], "assignment": \#(assignment),
             "tasks": {"word_count": {"type": "command", "command": ["/bin/true"]},
                       "backup": {"type": "command", "command": ["/bin/true"]}\#(extraTasks)},
             "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "$2b$12$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "role": "read"}}},
             "processes": \#(processes)}
            """#
        let settings = AgentSettings(json: try JSONValue.parse(text), file: "settings.json")
        var validator = SettingsValidator()
        return validator.check(settings, modules: [], manifests: [:])
    }

    static func messages(_ report: SettingsReport) -> [String: String] {
        Dictionary((report.generalIssues + report.processes.flatMap(\.issues)).map { ($0.pointer, $0.message) }, uniquingKeysWith: { a, b in a + " | " + b })
    }

    @Test func anExecutorWithReplicasIsOneExecutorPerReplica() throws {
        let report = try Self.report(#"""
            {"crunchers": {"type": "executor", "replicas": 3, "max_concurrent": 8, "priority_preference": "high", "labels": {"gpu": "yes"},
                           "tasks": {"word_count": {"priority_boost": 2, "max_concurrent": 2}, "backup": {}}},
             "alice": {"type": "executor", "user": "alice", "tasks": {"backup": {}}}}
            """#, assignment: #"{"strategy": "round_robin", "tasks": {"backup": "load_balanced"}, "aging_interval": 30}"#)
        #expect(report.isValid, "\(report.blockingIssues)")
        #expect(report.executors.map(\.name).sorted() == ["alice", "crunchers#1", "crunchers#2", "crunchers#3"])
        let first = try #require(report.executors.first { $0.name == "crunchers#1" })
        #expect(first.process == "crunchers" && first.maxConcurrent == 8 && first.priorityPreference == .high && first.labels == ["gpu": "yes"])
        #expect(first.tasks["word_count"] == .init(priorityBoost: 2, maxConcurrent: 2))
        #expect(first.tasks["backup"] == .init())
        #expect(report.executors.first { $0.name == "alice" }?.user == "alice")
        #expect(report.assignment.strategy == .roundRobin && report.assignment.tasks == ["backup": .loadBalanced] && report.assignment.agingInterval == 30)
        #expect(report.planned.isEmpty, "an executor runs no worker of its own")
    }

    @Test func everyProblemIsReportedAtItsPointer() throws {
        let report = try Self.report(#"""
            {"bad": {"type": "executor", "replicas": 0, "max_concurrent": 1e12, "priority_preference": "urgent", "labels": {"gpu": true},
                     "tasks": {"wrod_count": {}, "backup": {"priority_boost": 1.5, "max_concurrent": 0}}, "user": "bob", "colour": "red"},
             "empty": {"type": "executor", "tasks": {}},
             "none": {"type": "executor"}}
            """#, assignment: #"{"strategy": "fastest", "tasks": {"nope": "round_robin"}, "aging_interval": -1}"#,
            extraTasks: #", "gpu_job": {"type": "command", "command": ["/bin/true"], "require": {"gpu": "yes"}}"#)
        let found = Self.messages(report)
        #expect(found["/processes/bad/replicas"] != nil)
        #expect(found["/processes/bad/max_concurrent"] != nil)
        #expect(found["/processes/bad/priority_preference"] != nil)
        #expect(found["/processes/bad/labels/gpu"] != nil)
        #expect(found["/processes/bad/tasks/wrod_count"]?.contains("did you mean \"word_count\"") == true)
        #expect(found["/processes/bad/tasks/backup/priority_boost"] != nil)
        #expect(found["/processes/bad/tasks/backup/max_concurrent"] != nil)
        #expect(found["/processes/bad/user"]?.contains("no HTTP user \"bob\"") == true)
        #expect(found["/processes/bad"]?.contains("colour") == true)
        #expect(found["/processes/empty/tasks"] != nil)
        #expect(found["/processes/none"]?.contains("tasks") == true)
        #expect(found["/assignment/strategy"] != nil)
        #expect(found["/assignment/aging_interval"] != nil)
        #expect(found["/assignment/tasks/nope"]?.contains("unknown task") == true)
        #expect(found["/tasks/gpu_job/require"]?.contains("no executor takes it") == true)
        #expect(!report.isValid)
        #expect(report.executors.isEmpty)
    }

    /// A strategy for a task whose definition is wrong: the task's error is reported, not a
    /// second one at `/assignment` calling the task unknown.
    @Test func aStrategyForAnInvalidTaskIsNotCalledUnknown() throws {
        let report = try Self.report(#"{"crunchers": {"type": "executor", "tasks": {"backup": {}}}}"#,
                                     assignment: #"{"tasks": {"broken": "round_robin"}}"#,
                                     extraTasks: #", "broken": {"type": "command", "command": ["/bin/true"], "timeout": 0}"#)
        let found = Self.messages(report)
        #expect(found["/tasks/broken/timeout"] != nil, "\(found)")
        #expect(found["/assignment/tasks/broken"] == nil, "\(found)")
    }

    /// `replicas` is a host key of every process: an executor's is checked once, by the host
    /// schema, with the same clear message as any process's.
    @Test func aBadReplicasOfAnExecutorIsReportedOnceAtItsPointer() throws {
        let report = try Self.report(#"""
            {"zero": {"type": "executor", "replicas": 0, "tasks": {"backup": {}}},
             "word": {"type": "executor", "replicas": "two", "tasks": {"backup": {}}},
             "many": {"type": "executor", "replicas": 1001, "tasks": {"backup": {}}},
             "fine": {"type": "executor", "replicas": 2, "tasks": {"backup": {}}}}
            """#)
        let issues = (report.generalIssues + report.processes.flatMap(\.issues)).map { "\($0.pointer): \($0.message)" }
        let zero = issues.filter { $0.hasPrefix("/processes/zero/replicas:") }
        #expect(zero == ["/processes/zero/replicas: expected an integer ≥ 1, found 0"], "\(issues)")
        let word = issues.filter { $0.hasPrefix("/processes/word/replicas:") }
        #expect(word.count == 1 && word[0].contains("expected an integer") && word[0].contains(#"found "two" (string)"#), "\(issues)")
        let many = issues.filter { $0.hasPrefix("/processes/many/replicas:") }
        #expect(many.count == 1 && many[0].contains("≤ 1000") && many[0].contains("found 1001"), "\(issues)")
        #expect(!issues.contains { $0.hasPrefix("/processes/fine") }, "\(issues)")
        #expect(report.executors.map(\.name).sorted() == ["fine#1", "fine#2"])
    }

    /// `"role"`: the executor's people are the HTTP users of that role; a role nobody has, a
    /// role that is not one, or both a user and a role are errors at its pointer.
    @Test func anExecutorNamingARoleTakesItsPeopleFromTheHTTPUsers() throws {
        let report = try Self.report(#"""
            {"readers": {"type": "executor", "role": "read", "tasks": {"backup": {}}},
             "admins": {"type": "executor", "role": "admin", "tasks": {"backup": {}}},
             "both": {"type": "executor", "role": "read", "user": "alice", "tasks": {"backup": {}}},
             "boss": {"type": "executor", "role": "boss", "tasks": {"backup": {}}}}
            """#)
        let found = Self.messages(report)
        #expect(found["/processes/admins/role"]?.contains(#"no HTTP user has the role "admin" (users: alice (read))"#) == true, "\(found)")
        #expect(found["/processes/both/role"]?.contains("not both") == true, "\(found)")
        #expect(found["/processes/boss/role"] != nil, "\(found)")
        #expect(found["/processes/readers/role"] == nil, "\(found)")
        let readers = try #require(report.executors.first { $0.name == "readers" })
        #expect(readers.role == "read" && readers.people == ["alice"] && readers.isPerson && readers.user == nil)
    }
}
