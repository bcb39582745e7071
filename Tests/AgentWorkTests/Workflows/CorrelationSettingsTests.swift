import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Testing

/// What the settings check of correlation and signals before anything runs: the references of a
/// `wait_event`'s `where` as those of any step, a `wait_signal`'s name, and `"events"`.
@Suite(.ownThreads) struct CorrelationSettingsTests {
    static func problems(_ steps: String, input: String = #"{"type": "object", "properties": {"order": {"type": "integer"}}}"#) throws -> [String: String] {
        let json = try JSONValue.parse(Data(#"{"w": {"input": \#(input), "steps": \#(steps)}}"#.utf8))
        let (_, _, issues) = WorkflowSettings.read(json, chatAdapters: nil)
        return Dictionary(issues.map { ($0.pointer, $0.message) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func theReferencesOfAWhereAreCheckedAtTheirPointer() throws {
        let found = try Self.problems(#"""
            [{"id": "a", "wait_event": {"type": "t", "where": {"properties": {"order": {"const": "${input:/ordr}"}, "n": {"minimum": "${vars:/min}"},
                                                                              "s": {"const": "${steps:later}"}}}}},
             {"id": "later", "set": {"vars": {"min": 1}}}]
            """#)
        #expect(found["/workflows/w/steps/0/wait_event/where/properties/order/const"]?.contains("\"ordr\"") == true, "\(found)")
        #expect(found["/workflows/w/steps/0/wait_event/where/properties/n/minimum"]?.contains("no earlier set step sets") == true, "\(found)")
        #expect(found["/workflows/w/steps/0/wait_event/where/properties/s/const"]?.contains("not a step that comes earlier") == true, "\(found)")
        #expect(found.count == 3, "\(found)")
    }

    @Test func aWhereWithReferencesWhereNumbersGoCompilesAndABrokenOneDoesNot() throws {
        let fine = try Self.problems(#"""
            [{"id": "m", "set": {"vars": {"min": 1}}},
             {"id": "a", "wait_event": {"type": "t", "where": {"properties": {"n": {"minimum": "${vars:/min}", "pattern": "^${vars:/min}"},
                                                                              "order": {"const": "${input:/order}"}}}}}]
            """#)
        #expect(fine.isEmpty, "\(fine)")
        let broken = try Self.problems(#"[{"id": "a", "wait_event": {"type": "t", "where": {"minimum": "seven"}}}]"#)
        #expect(broken["/workflows/w/steps/0/wait_event/where"]?.contains("does not compile") == true, "\(broken)")
    }

    @Test func aWaitSignalNeedsAPlainNameAndAKnownGoto() throws {
        let found = try Self.problems(#"""
            [{"id": "a", "wait_signal": {"name": "a b"}},
             {"id": "b", "wait_signal": {}},
             {"id": "c", "wait_signal": {"name": "go", "extra": 1}},
             {"id": "d", "wait_signal": {"name": "go", "timeout": 5, "on_timeout": {"goto": "nowhere"}}}]
            """#)
        #expect(found["/workflows/w/steps/0/wait_signal/name"]?.contains("may contain only letters") == true, "\(found)")
        #expect(found["/workflows/w/steps/1/wait_signal"]?.contains("expected \"name\"") == true, "\(found)")
        #expect(found["/workflows/w/steps/2/wait_signal/extra"] != nil, "\(found)")
        #expect(found["/workflows/w/steps/3/wait_signal/on_timeout/goto"]?.contains("not a top-level step") == true, "\(found)")
    }

    @Test func declaredEventTypesAreCheckedAtTheirPointer() throws {
        let json = try JSONValue.parse(Data(#"""
            {"max_payload_bytes": 1000,
             "types": {"ok.type": {"schema": {"type": "object"}}, "bad type": {}, "task.failed": {},
                       "broken": {"schema": {"pattern": "("}}}}
            """#.utf8))
        let (settings, problems) = EventSettings.read(json)
        let found = Dictionary(problems.map { ($0.pointer, $0.message) }, uniquingKeysWith: { first, _ in first })
        #expect(settings.maximumPayloadBytes == 1000 && settings.types.keys.sorted() == ["ok.type"])
        #expect(found["/events/types/bad type"]?.contains("may contain only letters") == true, "\(found)")
        #expect(found["/events/types/task.failed"]?.contains("the runtime publishes itself") == true, "\(found)")
        #expect(found["/events/types/broken/schema"]?.contains("does not compile") == true, "\(found)")
    }
}
