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
    @Test func aSettingsRefusalKeepsItsCodePointerAndErrors() {
        let refusal = SettingsCommandError(.invalid, "/changes/0/name: expected a string",
                                           errors: [["pointer": "/changes/0/name", "message": "expected a string"]], pointer: "/changes/0/name").refusal
        #expect(refusal.json == ["ok": false, "code": "invalid", "error": "/changes/0/name: expected a string", "pointer": "/changes/0/name",
                                 "errors": [["pointer": "/changes/0/name", "message": "expected a string"]]], "\(refusal.json)")
        #expect(SettingsCommandError(.notFound, "no process named \"x\"").refusal.json == ["ok": false, "code": "not_found", "error": "no process named \"x\""])
    }

    @Test func aChatbotsErrorReplyFailsWithItsTextAndKeepsItsMembers() throws {
        guard case .failure(let refusal) = ChatRelay.reply(["error": true, "adapter": "status", "confidence": 0.5], text: "cannot tell") else {
            Issue.record("an error reply was taken for an answer")
            return
        }
        #expect(refusal.json == ["ok": false, "code": "failed", "error": "cannot tell", "text": "cannot tell", "adapter": "status", "confidence": 0.5],
                "\(refusal.json)")
        let answer = ChatRelay.reply(["adapter": "status", "confidence": 0.9], text: "all run")
        #expect(try answer.get() == ChatCommand.Answer(text: "all run", adapter: "status", confidence: 0.9))
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
        do {
            _ = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: [
                "changes": [["action": "enable_module", "name": "weather"]], "name": "stray", "if_match": "9f2c",
            ])
            Issue.record("a change beside changes was taken")
        } catch {
            let refusal = JSONValueDecoder.refusal(of: error)
            #expect(refusal.pointer == "/name")
            #expect(refusal.message.contains(#"unknown property "name" beside "changes"; allowed: changes, if_match"#), "\(refusal.message)")
        }
        let request = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: [
            "changes": [["action": "enable_module", "name": "weather"]], "if_match": "9f2c",
        ])
        #expect(request == SettingsChangeCommand.Request(changes: [SettingsChangeCommand.Change(action: .enableModule, name: "weather")], ifMatch: "9f2c"))
    }

    /// Which members an action needs and takes is the typed request's (the hand parser of the
    /// applied change is gone): each refusal at the member's pointer, in a list at the item's.
    @Test func aChangeIsDecodedWithTheMembersItsActionNeedsAndNoOther() throws {
        let cases: [(JSONValue, String, String)] = [
            (["action": "add_process", "name": "station"], "/settings", "add_process needs \"settings\""),
            (["name": "station"], "", "a change needs \"action\""),
            (["action": "replace"], "/text", "replace needs \"text\""),
            (["action": "enable_module"], "/name", "enable_module needs \"name\""),
            (["action": "add_workflow_step", "name": "w"], "/step", "add_workflow_step needs \"step\""),
            (["action": "enable_module", "name": "x", "text": "{}"], "/text", "unknown property \"text\" of enable_module; allowed: action, name"),
            (["changes": [["action": "enable_module", "name": "x"], ["action": "set_workflow", "name": "w"]]], "/changes/1/settings",
             "set_workflow needs \"settings\": the workflow's definition object"),
            (["changes": [["action": "add_workflow_step", "name": "w", "step": [:], "position": -1]]], "/changes/0/position", "an integer ≥ 0"),
        ]
        for (request, pointer, message) in cases {
            do {
                let decoded = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: request)
                Issue.record("\(request) was taken: \(decoded)")
            } catch {
                let refusal = JSONValueDecoder.refusal(of: error)
                #expect(refusal.code == .invalid && refusal.pointer == pointer, "\(request): \(refusal)")
                #expect(refusal.message.contains(message), "\(request): \(refusal.message)")
            }
        }
        // Encoded as it came: the action's members only, one change at the top level or a list.
        let single: JSONValue = ["action": "add_workflow_step", "name": "w", "step": ["id": "b"], "position": 1, "if_match": "9f2c"]
        #expect(try JSONValueEncoder().encode(JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: single)) == single)
        let list: JSONValue = ["changes": [["action": "replace", "text": "{}"], ["action": "disable_process", "name": "trades"]]]
        #expect(try JSONValueEncoder().encode(JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: list)) == list)
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
