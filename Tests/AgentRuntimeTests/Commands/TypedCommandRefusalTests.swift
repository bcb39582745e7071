@testable import AgentBase
@testable import AgentCommands
@testable import AgentRuntime
@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import JSONSchema
import Testing

/// The typed commands refuse as the hand-parsed ones did: the same code, message, pointer and
/// members, whichever front asked.
@Suite(.ownThreads) struct TypedCommandRefusalTests {
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
            #expect(refusal.message.hasPrefix("/since: expected seconds back from now"), "\(refusal.message)")
        }
        // A query string carries seconds as text.
        let request = try ProcessLog.Request.make(name: "p", lines: 5, since: .text("600"), after: 7, now: 1_000).get()
        #expect(request == ProcessLog.Request(name: "p", lines: 5, since: 400_000_000_000, after: 7))
    }

    /// Names, filters and prefixes take no control character; a message's text keeps line
    /// breaks and tabs and takes no other (stop 47's adversary: all were accepted).
    @Test func freeTextWithAControlCharacterIsRefusedAtItsPointer() throws {
        let cases: [(JSONValue, String)] = [
            (["command": "events", "type": "a\u{1}b"], "/type"),
            (["command": "events", "source": "\u{1B}[31m"], "/source"),
            (["command": "memory_list", "prefix": "a\u{0}"], "/prefix"),
            (["command": "memory_list", "after": "k\n"], "/after"),
            (["command": "chat_history", "conversation": "ops\u{7}"], "/conversation"),
        ]
        for (request, pointer) in cases {
            guard case .failure(let refusal) = CommandRegistry.standard.check(request) else {
                Issue.record("\(request) was taken")
                continue
            }
            #expect(refusal.pointer == pointer && refusal.code == .invalid, "\(request): \(refusal)")
            #expect(refusal.message.contains("no control characters"), "\(refusal.message)")
        }
        for (text, character) in [("a\u{1B}[2Jb", "U+001B at character 2"), ("\u{0}", "U+0000 at character 1"), ("é\u{9B}1m", "U+009B at character 2"),
                                  ("bell\u{7}", "U+0007 at character 5"), ("del\u{7F}", "U+007F at character 4")] {
            let refusal = try #require(frontRefusal(["command": "chat", "text": .string(text)], ChatCommand.Request.self), "\(text.debugDescription) was taken")
            #expect(refusal.pointer == "/text" && refusal.code == .invalid, "\(refusal)")
            #expect(refusal.message == "/text: expected text without control characters (line breaks and tabs are fine); found \(character)", "\(refusal.message)")
        }
        #expect(frontRefusal(["command": "chat", "text": "line one\r\nline\ttwo\n"], ChatCommand.Request.self) == nil)
        #expect(frontRefusal(["command": "chat", "text": "ünïcödé ✓ 漢字"], ChatCommand.Request.self) == nil)
    }

    /// A duration back beyond 100 years is refused with the range: `1e308s` read as "since
    /// the beginning" (clamped without a word).
    @Test func aSinceDurationBeyondItsRangeIsRefusedWithTheRange() throws {
        for since in ["1e308s", "36600d", "9e999m", "3155760001"] {
            guard case .failure(let refusal) = ProcessLog.Request.make(name: "p", lines: nil, since: .text(since), after: nil) else {
                Issue.record("\(since) was taken")
                continue
            }
            #expect(refusal.pointer == "/since", "\(refusal)")
            #expect(refusal.message == "/since: expected seconds back from now (a number from 0 to 3155760000), a duration back from now of at most 100 years (30s, 10m, 2h, 1d) or an ISO 8601 time; found \"\(since)\"",
                    "\(refusal.message)")
            #expect(TimeSpec.since(since) == nil, "\(since)")
        }
        #expect(TimeSpec.since("36500d", now: 4e9) == 4e9 - 36500 * 86400)
    }

    /// The refusal a front gives `request`: the registry's check, then decoding.
    func frontRefusal(_ request: JSONValue, _ type: (some Decodable).Type) -> CommandError? {
        switch CommandRegistry.standard.check(request) {
        case .failure(let refusal): return refusal
        case .success:
            do {
                _ = try JSONValueDecoder().decode(type, from: request)
                return nil
            } catch {
                return JSONValueDecoder.refusal(of: error)
            }
        }
    }

    @Test func aNumberItsTypeCannotHoldIsRefusedWithTheRange() throws {
        // It used to say "expected a whole number, found an integer".
        for after in ["9223372036854775808", "1e308"] {
            let request = try JSONValue.parse(#"{"command": "events", "after": \#(after)}"#)
            let refusal = try #require(frontRefusal(request, EventsCommand.Request.self), "\(after) was taken")
            #expect(refusal.pointer == "/after" && refusal.code == .invalid)
            #expect(refusal.message == "/after: expected a whole number from -9223372036854775808 to 9223372036854775807, found \(after) (integer)", "\(refusal.message)")
        }
        // 1e-999999 passed `exclusiveMinimum: 0`, then ran as a window of 0.
        let tiny = try #require(frontRefusal(try JSONValue.parse(#"{"command": "readiness", "window": 1e-999999}"#), ReadinessCommand.Request.self))
        #expect(tiny.pointer == "/window")
        #expect(tiny.message == "/window: expected a number of magnitude at least 5e-324 (a smaller one reads as 0), found 1e-999999 (number)", "\(tiny.message)")
        // `since` names its range; it said "found null" over the socket.
        let since = try #require(frontRefusal(try JSONValue.parse(#"{"command": "logs", "name": "p", "since": 1e999999}"#), LogsCommand.Request.self))
        #expect(since.pointer == "/since")
        #expect(since.message == "/since: expected a number ≤ 3155760000, found 1e999999", "\(since.message)")
        #expect(frontRefusal(["command": "readiness", "window": 0.5], ReadinessCommand.Request.self) == nil)
    }

    @Test func aMissingMemberIsPointedAtAndACommandWithoutMembersSaysSo() throws {
        let missing = try #require(frontRefusal(["command": "memory_set", "value": 1], MemorySetCommand.Request.self))
        #expect(missing.pointer == "/key", "\(missing)")
        #expect(missing.message == #"/key: missing required property "key""#, "\(missing.message)")
        let unknown = try #require(frontRefusal(["command": "status", "verbose": 1], NoFields.self))
        #expect(unknown.pointer == "/verbose")
        #expect(unknown.message == #"/verbose: unknown property "verbose"; status takes no members"#, "\(unknown.message)")
    }

    @Test func aMemoryKeyWithAControlCharacterOrAValueTooDeepIsRefusedAtItsPointer() throws {
        let key = try #require(frontRefusal(["command": "memory_set", "key": "a\u{7}b", "value": 1], MemorySetCommand.Request.self))
        #expect(key.pointer == "/key" && key.code == .invalid, "\(key)")
        #expect(key.message.contains("no control characters"), "\(key.message)")
        let run = try #require(frontRefusal(["command": "memory_get", "key": "k", "run": "w\n1"], MemoryGetCommand.Request.self))
        #expect(run.pointer == "/run", "\(run)")
        // What the schema does not hold (a module's write) the limits refuse, with the pointer.
        do throws(MemoryError) {
            try MemoryLimits.check(MemoryWrite(scope: .agent, key: "a\u{0}b", operation: .delete, expectedVersion: nil))
            Issue.record("a key with NUL was taken")
        } catch {
            #expect(error.refusal.pointer == "/key", "\(error)")
        }
        // 511 levels were accepted, then broke `memory get` and `memory list`.
        var deep: JSONValue = 1
        for _ in 0..<101 { deep = [deep] }
        do throws(MemoryError) {
            try MemoryLimits.check(MemoryWrite(scope: .agent, key: "k", operation: .put(["a": deep]), expectedVersion: nil))
            Issue.record("a value 102 levels deep was taken")
        } catch {
            let pointer = "/value/a" + String(repeating: "/0", count: 99)
            #expect(error.refusal.pointer == pointer && error.code == .invalid, "\(error)")
            #expect(error.message.contains("more than 100 levels deep (found a level 101 at \(pointer))"), "\(error.message)")
        }
        var fine: JSONValue = 1
        for _ in 0..<100 { fine = [fine] }
        try MemoryLimits.check(MemoryWrite(scope: .agent, key: "k", operation: .put(fine), expectedVersion: nil))
    }

    @Test func aRunsTimeBeyondItsBoundsIsRefusedNotClamped() {
        let now = 1_800_000_000.0
        #expect(TaskCoordinator.parseTime("10m", now: now) == now + 600)
        #expect(TaskCoordinator.parseTime("2027-01-15T00:00:00Z", now: now) == 1_799_971_200)
        // Clamped before: 100 years, 2262, 1677 (which ran at once).
        for text in ["1e308s", "infs", "36525.1d", "99999-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z"] {
            #expect(TaskCoordinator.parseTime(text, now: now) == nil, "\(text)")
        }
        #expect(TaskCoordinator.timeForm.contains("from 1970-01-01T00:00:00Z to 100 years from now"))
    }
}
