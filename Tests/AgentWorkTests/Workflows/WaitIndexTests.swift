import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Testing

/// The index of waiting `wait_event` steps: an event is offered to the waits whose const
/// members it matches, and to every wait it could pass by JSON Schema's rules.
@Suite(.ownThreads) struct WaitIndexTests {
    static func wait(_ run: String) -> WaitIndex.Wait { WaitIndex.Wait(run: run, step: "w", condition: nil) }

    static func runs(_ index: WaitIndex, _ type: String, _ payload: JSONValue) -> [String] {
        index.candidates(type: type, payload: payload).map(\.run)
    }

    @Test func anEventIsOfferedOnlyToTheWaitsOfItsCorrelationValue() {
        var index = WaitIndex()
        for order in 0..<1_000 {
            index.add(Self.wait("r\(order)"), type: "order.confirmed", where: ["properties": ["order": ["const": .number(JSONNumber(order))]]])
        }
        #expect(Self.runs(index, "order.confirmed", ["order": 7]) == ["r7"])
        // Numbers compare by value, as `const` compares them.
        #expect(Self.runs(index, "order.confirmed", ["order": .number(JSONNumber(text: "7.0")!)]) == ["r7"])
        #expect(Self.runs(index, "order.confirmed", ["order": "7"]).isEmpty)
        #expect(Self.runs(index, "order.paid", ["order": 7]).isEmpty)
        #expect(index.remove(run: "r7", step: "w") == nil)
        #expect(Self.runs(index, "order.confirmed", ["order": 7]).isEmpty)
        for order in 0..<1_000 where order != 7 { _ = index.remove(run: "r\(order)", step: "w") }
        #expect(index.count == 0 && index.types.isEmpty)
    }

    @Test func anEventWithoutTheMemberIsOfferedToEveryWaitThatDoesNotRequireIt() {
        var index = WaitIndex()
        index.add(Self.wait("loose"), type: "t", where: ["properties": ["order": ["const": 1]]])
        index.add(Self.wait("strict"), type: "t", where: ["type": "object", "required": ["order"], "properties": ["order": ["const": 2]]])
        index.add(Self.wait("any"), type: "t", where: nil)
        index.add(Self.wait("nested"), type: "t", where: ["properties": ["order": ["properties": ["id": ["const": "a"]]]]])
        // Without `order`, "loose" and "nested" pass their schemas (properties apply only to
        // members that are there); "strict" cannot.
        #expect(Set(Self.runs(index, "t", ["other": true])) == ["loose", "any", "nested"])
        #expect(Set(Self.runs(index, "t", "not an object")) == ["loose", "any", "nested"])
        #expect(Set(Self.runs(index, "t", ["order": 2])) == ["strict", "any", "nested"])
        #expect(Set(Self.runs(index, "t", ["order": ["id": "a"]])) == ["any", "nested"])
        // In the order they started waiting.
        #expect(Self.runs(index, "t", ["order": 1]) == ["loose", "any", "nested"])
    }

    @Test func aWaitArmedAgainReplacesItsEarlierEntry() {
        var index = WaitIndex()
        index.add(Self.wait("r"), type: "a", where: ["properties": ["k": ["const": 1]]])
        index.add(Self.wait("r"), type: "b", where: ["properties": ["k": ["const": 2]]])
        #expect(index.count == 1 && index.types == ["b"])
        #expect(Self.runs(index, "b", ["k": 2]) == ["r"] && Self.runs(index, "a", ["k": 1]).isEmpty)
        #expect(index.contains(run: "r", step: "w"))
        #expect(index.remove(run: "r", step: "w") == "b")
    }
}
