import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Tasks over the API, one at a time (`POST /api/tasks`, `GET|PUT|DELETE /api/tasks/{name}`),
/// against a real agent and its settings file on disk: each change checked with the whole
/// settings, written keeping everything outside the member byte for byte, applied by reload,
/// guarded by `if_match`, audited; the read role refused.
@Suite(.ownThreads, .serialized) struct TaskResourceHTTPTests {
    @Test func aTaskIsCreatedOverHTTPRunAndDeletedLeavingTheFileByteForByte() throws {
        let (agent, directory) = try ResourceAgent.start("task-resource-create")
        defer { agent.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let original = agent.text

        // Invalid: every error at its pointer, the request's own beside; nothing written.
        let invalid = try agent.http("POST", "/api/tasks", ["name": "note", "definition": ["type": "command", "command": ["/bin/true"], "retries": ["max": -1]]])
        #expect(invalid.status == 400, "\(invalid.body)")
        #expect(ResourceAgent.pointers(invalid.json).contains("/tasks/note/retries/max"), "\(invalid.body)")
        #expect(invalid.json["pointer"] == "/definition/retries/max", "\(invalid.body)")
        let badName = try agent.http("POST", "/api/tasks", ["name": "../etc", "definition": ["type": "command", "command": ["/bin/true"]]])
        #expect(badName.status == 400 && badName.json["pointer"] == "/name", "\(badName.body)")
        #expect(agent.text == original)

        // Created: answered once written and applied — it runs at once.
        let created = try agent.http("POST", "/api/tasks", ["name": "note", "definition": ["type": "command", "command": #"echo '{"n": 7}'"#, "shell": true]])
        #expect(created.status == 200, "\(created.body)")
        #expect(created.json["changed"] == true && created.json["task"] == "note", "\(created.body)")
        let written = agent.text
        #expect(ResourceAgent.onlyBetween(original, written, before: #""report":\#(ResourceAgent.report)"#, after: "\n\t},\n\t\"schedules\""), "\(written)")
        let run = try agent.run("note")
        #expect(run["status"] == "succeeded" && run["output"]?["n"] == 7, "\(run)")
        let got = try agent.http("GET", "/api/tasks/note")
        #expect(got.status == 200 && got.json["definition"]?["shell"] == true && got.json["hash"]?.stringValue != nil, "\(got.body)")
        let taken = try agent.http("POST", "/api/tasks", ["name": "note", "definition": ["type": "command", "command": ["/bin/true"]]])
        #expect(taken.status == 409 && taken.json["code"] == "conflict", "\(taken.body)")

        // Audited like every change: who, what, the result.
        let history = try agent.http("GET", "/api/history?limit=100").body
        #expect(history.contains("task_create note → ok"), "\(history)")

        // Deleted: the file is what it was, byte for byte; the task is gone.
        let deleted = try agent.http("DELETE", "/api/tasks/note")
        #expect(deleted.status == 200 && deleted.json["task"] == "note", "\(deleted.body)")
        #expect(agent.text == original, "\(agent.text)")
        #expect(try agent.http("GET", "/api/tasks/note").status == 404)
        #expect(try agent.http("POST", "/api/tasks/note/run", ["wait": true]).status == 404)
        #expect(try agent.http("DELETE", "/api/tasks/note").status == 404)
    }

    @Test func anUpdateNeedsAFreshIfMatchAndKeepsEverythingOutsideTheMember() throws {
        let (agent, directory) = try ResourceAgent.start("task-resource-update")
        defer { agent.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let original = agent.text
        let hash = try agent.hash("/api/tasks/backup")
        let v2: JSONValue = ["type": "command", "command": #"echo '{"v": 2}'"#, "shell": true, "timeout": 60]

        // A stale if_match (body or If-Match header): 412, nothing written.
        let stale = try agent.http("PUT", "/api/tasks/backup", ["definition": v2, "if_match": "0000000000000000-1"])
        #expect(stale.status == 412 && stale.json["code"] == "precondition_failed", "\(stale.body)")
        let staleHeader = try agent.http("PUT", "/api/tasks/backup", ["definition": v2], headers: ["If-Match": #""0000000000000000-1""#])
        #expect(staleHeader.status == 412, "\(staleHeader.body)")
        #expect(agent.text == original)

        // Two updates racing with the same fresh hash: one is applied, the other refused.
        let statuses = LockedStatuses()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let body: JSONValue = ["definition": index == 0 ? v2 : ["type": "command", "command": #"echo '{"v": 3}'"#, "shell": true], "if_match": .string(hash)]
            statuses.append((try? agent.http("PUT", "/api/tasks/backup", body).status) ?? 0)
        }
        #expect(statuses.sorted == [200, 412], "\(statuses.sorted)")
        let raced = agent.text
        #expect(ResourceAgent.onlyBetween(original, raced, before: #""backup": "#, after: ",\n\t\t\"report\":"), "\(raced)")

        // A fresh one (as an If-Match header): applied; new runs take it; the rest of the file as it was.
        let fresh = try agent.hash("/api/tasks/backup")
        let v4: JSONValue = ["type": "command", "command": #"echo '{"v": 4}'"#, "shell": true, "timeout": 60]
        let updated = try agent.http("PUT", "/api/tasks/backup", ["definition": v4], headers: ["If-Match": "\"\(fresh)\""])
        #expect(updated.status == 200 && updated.json["changed"] == true, "\(updated.body)")
        let text = agent.text
        #expect(ResourceAgent.onlyBetween(original, text, before: #""backup": "#, after: ",\n\t\t\"report\":"), "\(text)")
        #expect(try JSONValue.parse(Data(text.utf8))["tasks"]?["backup"] == v4, "\(text)")
        #expect(try agent.run("backup")["output"]?["v"] == 4)

        // Valid JSON that makes the settings invalid elsewhere: the schedule's input no longer
        // passes the task's schema. Refused with the schedule's pointer; nothing written.
        let breaking = try agent.http("PUT", "/api/tasks/backup", ["definition": ["type": "command", "command": ["/bin/true"],
                                                                                "input": ["type": "object", "required": ["full"]]]])
        #expect(breaking.status == 400, "\(breaking.body)")
        #expect(ResourceAgent.pointers(breaking.json).contains { $0.hasPrefix("/schedules/nightly/run") }, "\(breaking.body)")
        #expect(agent.text == text)
        #expect(try agent.http("PUT", "/api/tasks/nosuch", ["definition": v2]).status == 404)
    }

    @Test func aReferencedTaskIsNotDeletedAndTheReadRoleChangesNothing() throws {
        let (agent, directory) = try ResourceAgent.start("task-resource-refusals")
        defer { agent.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let original = agent.text

        // Named by a schedule: refused, naming it; the same answer over the socket.
        let refused = try agent.http("DELETE", "/api/tasks/backup")
        #expect(refused.status == 409 && refused.json["code"] == "conflict" && refused.json["pointer"] == "/name", "\(refused.body)")
        #expect(refused.json["error"]?.stringValue?.contains(#"schedule "nightly""#) == true, "\(refused.body)")
        #expect(try agent.control(["command": "task_delete", "name": "backup"]) == refused.json)
        #expect(agent.text == original)
        let cli = try agent.cli(["task", "delete", "backup"])
        #expect(cli.status == 1 && cli.stderr.contains(#"schedule "nightly""#), "\(cli.stderr)")

        // The read role reads, and changes nothing.
        let alice = WorkflowAgent.aliceToken
        #expect(try agent.http("GET", "/api/tasks/backup", token: alice).status == 200)
        let changes: [(String, String, JSONValue?)] = [
            ("POST", "/api/tasks", ["name": "x", "definition": ["type": "command", "command": ["/bin/true"]]]),
            ("PUT", "/api/tasks/report", ["definition": ["type": "command", "command": ["/bin/false"]]]),
            ("DELETE", "/api/tasks/report", nil),
        ]
        for (method, path, body) in changes {
            let answer = try agent.http(method, path, body, token: alice)
            #expect(answer.status == 403 && answer.json["code"] == "forbidden", "\(method) \(path): \(answer.body)")
        }
        #expect(agent.text == original)

        // Once the schedule is gone, the task goes.
        #expect(try agent.http("DELETE", "/api/schedules/nightly").status == 200)
        #expect(try agent.http("DELETE", "/api/tasks/backup").status == 200)
        #expect(try JSONValue.parse(Data(agent.text.utf8))["tasks"]?.objectValue?.keys == ["report"])
    }
}

/// Statuses collected from threads.
final class LockedStatuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []

    func append(_ value: Int) { lock.withLock { values.append(value) } }
    var sorted: [Int] { lock.withLock { values.sorted() } }
}
