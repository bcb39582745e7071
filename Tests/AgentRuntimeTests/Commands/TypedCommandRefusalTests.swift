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
            #expect(refusal.message.hasPrefix("/since: expected seconds back from now"), "\(refusal.message)")
        }
        // A query string carries seconds as text.
        let request = try ProcessLog.Request.make(name: "p", lines: 5, since: .text("600"), after: 7, now: 1_000).get()
        #expect(request == ProcessLog.Request(name: "p", lines: 5, since: 400_000_000_000, after: 7))
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
