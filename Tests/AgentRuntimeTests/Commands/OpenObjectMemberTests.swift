@testable import AgentBase
import AgentTestSupport
@testable import AgentWork
import JSONSchema
import Testing

/// A request member that must be an object but is otherwise open (a workflow's definition,
/// a step) is decoded as the client wrote it: its members in their order (the settings file is
/// written in that order), and anything but an object is refused at its pointer.
@Suite(.ownThreads) struct OpenObjectMemberTests {
    @Test func aDefinitionKeepsItsMembersInTheirOrderThroughDecodingAndEncoding() throws {
        let definition: JSONValue = ["steps": [["id": "b", "task": "t"]], "on_event": "ticket.opened", "input": ["type": "object"], "description": "z"]
        let request: JSONValue = ["name": "support", "definition": definition, "if_match": "9c1e"]
        let decoded = try JSONValueDecoder().decode(WorkflowDefinitionRequest.self, from: request)
        #expect(Array(decoded.definition.keys) == ["steps", "on_event", "input", "description"])
        #expect(try JSONValueEncoder().encode(decoded) == request)
        let change = WorkflowCreateCommand.settingsChange(decoded)
        #expect(change == WorkflowSettingsChange(.add, name: "support", settings: decoded.definition, ifMatch: "9c1e"))
        #expect(Array(change.settings?.keys ?? []) == ["steps", "on_event", "input", "description"])
    }

    @Test func aDefinitionThatIsNoObjectIsRefusedAtItsPointer() {
        do {
            _ = try JSONValueDecoder().decode(WorkflowAddStepCommand.Request.self, from: ["name": "support", "step": ["notify"]])
            Issue.record("an array was taken for a step")
        } catch let error as DecodingError {
            #expect(JSONValueDecoder.pointer(of: error) == "/step")
            #expect("\(error)".contains("expected an object, found an array"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
