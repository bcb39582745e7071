import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Schedules and executors over the API, one at a time (`/api/schedules`, `/api/executors`),
/// through the settings path as tasks are, against a real agent.
@Suite(.ownThreads, .serialized) struct ScheduleExecutorResourceHTTPTests {
    @Test func aScheduleIsCreatedFiresIsUpdatedWithIfMatchAndIsDeleted() throws {
        let (agent, directory) = try ResourceAgent.start("schedule-resource")
        defer { agent.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let original = agent.text

        // Invalid: at their pointers, nothing written.
        let badCron = try agent.http("POST", "/api/schedules", ["name": "often", "definition": ["cron": "0 25 * * *", "run": ["task": "report"]]])
        #expect(badCron.status == 400 && ResourceAgent.pointers(badCron.json).contains("/schedules/often/cron"), "\(badCron.body)")
        #expect(badCron.json["pointer"] == "/definition/cron", "\(badCron.body)")
        let badTask = try agent.http("POST", "/api/schedules", ["name": "often", "definition": ["every": 1, "run": ["task": "reprot"]]])
        #expect(badTask.status == 400 && badTask.json["pointer"] == "/definition/run/task" && badTask.body.contains("report"), "\(badTask.body)")
        #expect(agent.text == original)

        // Created: applied by reload — it fires.
        let created = try agent.http("POST", "/api/schedules", ["name": "often", "definition": ["every": 1, "run": ["task": "report"]]])
        #expect(created.status == 200 && created.json["schedule"] == "often", "\(created.body)")
        #expect(ResourceAgent.onlyBetween(original, agent.text, before: #""nightly": \#(ResourceAgent.nightly)"#, after: "\n\t}\n}"), "\(agent.text)")
        let fired = WorkflowAgent.wait(timeout: 60) {
            let runs = (try? agent.http("GET", "/api/runs?task=report").json["runs"]?.arrayValue) ?? []
            return runs.contains { $0["requested_by"] == "schedule" && $0["status"] == "succeeded" }
        }
        #expect(fired, "no run of report by the schedule: \((try? agent.http("GET", "/api/runs").body) ?? "")")
        let got = try agent.http("GET", "/api/schedules/often")
        #expect(got.status == 200 && got.json["definition"] == ["every": 1, "run": ["task": "report"]], "\(got.body)")

        // Updated: a stale hash refused (412), a fresh one applied.
        let hash = try #require(got.json["hash"]?.stringValue)
        #expect(try agent.http("DELETE", "/api/schedules/nightly?if_match=0-0").status == 412)
        let updated = try agent.http("PUT", "/api/schedules/often", ["definition": ["every": 3600, "run": ["task": "report"]], "if_match": .string(hash)])
        #expect(updated.status == 200, "\(updated.body)")
        let stale = try agent.http("PUT", "/api/schedules/often", ["definition": ["every": 60, "run": ["task": "report"]], "if_match": .string(hash)])
        #expect(stale.status == 412, "\(stale.body)")
        let listed = try agent.http("GET", "/api/schedules").json["schedules"]?.arrayValue ?? []
        #expect(listed.contains { $0["name"] == "often" && $0["every"]?.serialized().contains("3600") == true }, "\(listed)")

        // Deleted: nothing names a schedule; the file is as it was.
        #expect(try agent.http("DELETE", "/api/schedules/often").status == 200)
        #expect(agent.text == original, "\(agent.text)")
        #expect(try agent.http("GET", "/api/schedules/often").status == 404)
        #expect(try agent.http("POST", "/api/schedules", ["name": "x", "definition": ["every": 5, "run": ["task": "report"]]], token: WorkflowAgent.aliceToken).status == 403)
    }

    @Test func anExecutorIsCreatedTakesRunsAndIsNotDeletedWhileATaskNeedsIt() throws {
        let (agent, directory) = try ResourceAgent.start("executor-resource")
        defer { agent.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let original = agent.text

        // Another kind of process is not an executor.
        let wrongType = try agent.http("POST", "/api/executors", ["name": "crunchers", "definition": ["type": "host_stats", "tasks": [:]]])
        #expect(wrongType.status == 400 && wrongType.json["pointer"] == "/definition/type", "\(wrongType.body)")
        let unknownTask = try agent.http("POST", "/api/executors", ["name": "crunchers", "definition": ["tasks": ["reprot": [:]]]])
        #expect(unknownTask.status == 400 && ResourceAgent.pointers(unknownTask.json).contains("/processes/crunchers/tasks/reprot"), "\(unknownTask.body)")
        #expect(agent.text == original)

        // Created without "type": written as a process of type "executor"; it takes the task's runs.
        let created = try agent.http("POST", "/api/executors", ["name": "crunchers", "definition": ["max_concurrent": 2, "tasks": ["report": [:]]]])
        #expect(created.status == 200 && created.json["executor"] == "crunchers", "\(created.body)")
        let process = try JSONValue.parse(Data(agent.text.utf8))["processes"]?["crunchers"]
        #expect(process?.objectValue?.keys == ["type", "max_concurrent", "tasks"] && process?["type"] == "executor", "\(agent.text)")
        #expect(ResourceAgent.onlyBetween(original, agent.text, before: #""processes": {"#, after: "},\n\t\"http\""), "\(agent.text)")
        let executors = try agent.http("GET", "/api/executors").json["executors"]?.arrayValue ?? []
        #expect(executors.contains { $0["name"] == "crunchers" }, "\(executors)")
        #expect(try agent.run("report")["executor"] == "crunchers")
        #expect(try agent.http("GET", "/api/executors/crunchers").json["definition"]?["type"] == "executor")

        // Labels, then a task that requires them: the executor is what the task needs.
        let labelled = try agent.http("PUT", "/api/executors/crunchers", ["definition": ["tasks": ["report": [:]], "labels": ["gpu": "yes"]]])
        #expect(labelled.status == 200, "\(labelled.body)")
        let requiring = try agent.http("PUT", "/api/tasks/report", ["definition": ["type": "command", "command": ["/bin/true"], "require": ["gpu": "yes"]]])
        #expect(requiring.status == 200, "\(requiring.body)")
        let needed = try agent.http("DELETE", "/api/executors/crunchers")
        #expect(needed.status == 409 && needed.json["error"]?.stringValue?.contains(#"task "report""#) == true, "\(needed.body)")
        let named = try agent.http("DELETE", "/api/tasks/report")
        #expect(named.status == 409 && named.json["error"]?.stringValue?.contains(#"executor "crunchers""#) == true, "\(named.body)")
        #expect(try agent.http("PUT", "/api/executors/crunchers", ["definition": ["tasks": [:]]], token: WorkflowAgent.aliceToken).status == 403)

        // Without the requirement it goes. An executor added as a process is one to these routes.
        #expect(try agent.http("PUT", "/api/tasks/report", ["definition": ["type": "command", "command": ["/bin/true"]]]).status == 200)
        let deleted = try agent.http("DELETE", "/api/executors/crunchers")
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(try agent.http("GET", "/api/executors/crunchers").status == 404)
        let added = try agent.http("POST", "/api/settings/changes", ["action": "add_process", "name": "other", "settings": ["type": "executor", "tasks": ["report": [:]]]])
        #expect(added.status == 200, "\(added.body)")
        #expect(try agent.http("GET", "/api/executors/other").status == 200)
    }
}
