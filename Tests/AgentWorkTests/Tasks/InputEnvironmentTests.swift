import AgentTestSupport
@testable import AgentWork
import JSONSchema
import Testing

/// The input's fields as `INPUT_*`: what is left out is measured, not written, and said in a
/// line of bounded length.
@Suite(.ownThreads) struct InputEnvironmentTests {
    @Test func anInputOfMoreFieldsThanTheBoundSetsNoneAndSaysHowMany() {
        var object = JSONObject()
        for index in 0...InputEnvironment.mostFields { object["k\(index)"] = .number(JSONNumber(index)) }
        let (variables, omitted) = InputEnvironment.variables(for: .object(object))
        #expect(variables.isEmpty)
        #expect(omitted == "1025 fields, more than the 1024 set as INPUT_*: none is")
        object["k0"] = nil
        #expect(InputEnvironment.variables(for: .object(object)).variables.count == InputEnvironment.mostFields)
    }

    @Test func fieldsLeftOutForTheirSizeAreNamedTenAtMost() {
        var object: JSONObject = ["small": "kept"]
        for index in 0..<15 { object["big\(index)"] = .array([.string(String(repeating: "x", count: InputEnvironment.largestValue))]) }
        object["huge"] = .string(String(repeating: "y", count: 5_000_000))
        let (variables, omitted) = InputEnvironment.variables(for: .object(object))
        #expect(variables == ["INPUT_SMALL": "kept"])
        #expect(omitted == "big0, big1, big10, big11, big12, big13, big14, big2, big3, big4 and 6 more too big for the environment; not set as INPUT_*")
    }
}
