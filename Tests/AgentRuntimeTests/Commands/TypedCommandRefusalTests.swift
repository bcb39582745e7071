@testable import AgentBase
@testable import AgentCommands
@testable import AgentRuntime
@testable import AgentSupervision
@testable import AgentWork
import JSONSchema
import Testing

/// The typed commands refuse as the hand-parsed ones did: the same code, message, pointer and
/// members, whichever front asked.
@Suite struct TypedCommandRefusalTests {
    @Test func aHostsRefusalKeepsItsCodePointerErrorsAndItsOwnMembers() throws {
        let answer: JSONValue = ["ok": false, "code": "not_found", "error": "no memory key \"k\" in agent", "key": "k", "scope": "agent"]
        guard case .failure(let refusal) = EncodedAnswer.result(answer) else {
            Issue.record("\(answer) was taken for an answer")
            return
        }
        #expect(refusal.code == .notFound)
        #expect(refusal.json == answer, "\(refusal.json)")
        let invalid: JSONValue = ["ok": false, "code": "invalid", "error": "/changes/0/name: expected a string", "pointer": "/changes/0/name",
                                  "errors": [["pointer": "/changes/0/name", "message": "expected a string"]]]
        guard case .failure(let second) = EncodedAnswer.result(invalid) else {
            Issue.record("\(invalid) was taken for an answer")
            return
        }
        #expect(second.json == invalid, "\(second.json)")
    }

    @Test func aRefusalWithoutErrorOrCodeFailsWithItsErrorsJoined() {
        guard case .failure(let refusal) = EncodedAnswer.result(["ok": false, "errors": ["a: bad", "b: worse"]]) else {
            Issue.record("taken for an answer")
            return
        }
        #expect(refusal.code == .failed)
        #expect(refusal.message == "a: bad\nb: worse")
        #expect(refusal.json["errors"] == ["a: bad", "b: worse"])
        guard case .success(let answer) = EncodedAnswer.result(["ok": true, "kept": ["a"]]) else {
            Issue.record("refused")
            return
        }
        #expect(answer.json == ["ok": true, "kept": ["a"]])
    }

    @Test func aMemoryRefusalCarriesItsKeyScopeAndVersion() {
        let write = MemoryWrite(scope: .workflowRun("w1"), key: "k", operation: .delete, expectedVersion: 2)
        let refusal = MemoryError.conflict(write, found: 3).refusal
        #expect(refusal.json == [
            "ok": false, "code": "conflict",
            "error": "the key was expected to be at version 2 but it is at version 3: read it again and retry (key \"k\" in run:w1)",
            "key": "k", "scope": "run:w1", "version": 3,
        ], "\(refusal.json)")
        #expect(MemoryCommands.unavailable.json["code"] == "unavailable")
    }

    @Test func aChangeBesideAListOfChangesIsRefusedAtItsPointer() throws {
        let request = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: [
            "changes": [["action": "enable_module", "name": "weather"]], "name": "stray", "if_match": "9f2c",
        ])
        #expect(request.changes?.count == 1 && request.ifMatch == "9f2c" && request.change.name == "stray")
        do {
            _ = try SettingsCommands.changes(in: request)
            Issue.record("a change beside changes was taken")
        } catch {
            #expect(error.pointer == "/name")
            #expect(error.message.contains(#"unknown property "name" beside "changes"; allowed: changes, if_match"#), "\(error.message)")
        }
        let single = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: ["action": "add_process", "name": "station"])
        do {
            _ = try SettingsCommands.changes(in: single)
            Issue.record("add_process without settings was taken")
        } catch {
            #expect(error.pointer == "/settings", "\(error)")
        }
    }

    @Test func aLogsRequestSinceNoTimeIsRefusedAtSince() throws {
        for since in [TimeSince.text("yesterday"), .seconds(-1)] {
            guard case .failure(let refusal) = ProcessLog.Request.make(name: "p", lines: nil, since: since, after: nil) else {
                Issue.record("\(since) was taken")
                continue
            }
            #expect(refusal.pointer == "/since" && refusal.code == .invalid)
            #expect(refusal.message.hasPrefix("\"since\" must be seconds back from now"), "\(refusal.message)")
        }
        // A query string carries seconds as text.
        let request = try ProcessLog.Request.make(name: "p", lines: 5, since: .text("600"), after: 7, now: 1_000).get()
        #expect(request == ProcessLog.Request(name: "p", lines: 5, since: 400_000_000_000, after: 7))
    }
}
