import AgentModuleABI
import AgentTestSupport
import Foundation
import Testing
@testable import AgentModuleKit

/// Payloads are views into their batch's shared buffer: they must behave like the byte arrays
/// they replaced, and outlive the host's buffers.
@Suite(.ownThreads) struct EventPayloadTests {
    @Test func aPayloadIsACollectionOfBytesIndexedFromZero() throws {
        let payload: EventPayload = EventPayload(Array(#"{"n":1}"#.utf8))
        #expect(payload.count == 7 && payload.startIndex == 0 && payload.endIndex == 7)
        #expect(payload[0] == UInt8(ascii: "{") && payload[6] == UInt8(ascii: "}"))
        #expect(String(decoding: payload, as: UTF8.self) == #"{"n":1}"#)
        #expect(Data(payload) == Data(#"{"n":1}"#.utf8))
        #expect(Array(payload.dropFirst().prefix(3)) == Array(#""n""#.utf8))
        #expect(payload.withUnsafeBytes { Array($0) } == Array(#"{"n":1}"#.utf8))
        #expect(payload == EventPayload(Array(#"{"n":1}"#.utf8)) && payload != [1, 2])
        #expect(Set([payload, EventPayload(Array(#"{"n":1}"#.utf8))]).count == 1)
        let empty: EventPayload = []
        #expect(empty.isEmpty && empty.withUnsafeBytes { $0.count } == 0 && Array(empty) == [])
        let event = Event(type: "t", source: "s", time: Date(), payload: Array(#"{"n":1}"#.utf8))
        #expect(try event.decode([String: Int].self) == ["n": 1])
        #expect(event.payloadText == #"{"n":1}"#)
    }

    @Test func payloadsOfABatchOutliveTheHostsBuffersAndLaterBatches() async throws {
        let host = EventReceiveTests.QueueHost()
        let api = host.api(notifier: true)
        let context = ProcessContext(processName: "sink", processType: "test", host: HostBridge(api))
        context.startEventNotifications()
        defer {
            context.stopEventNotifications()
            api.deallocate()
        }
        for index in 0..<5 { host.deliver(Array("first-\(index)".utf8)) }
        var kept: [Event] = []
        while kept.count < 5, let event = await context.nextEvent() { kept.append(event) }
        // The host frees and reuses its buffers for the next batches.
        for round in 0..<3 {
            for index in 0..<5 { host.deliver(Array("round-\(round)-\(index)-xxxxxxxxxxxxxxxx".utf8)) }
            var later: [String] = []
            while later.count < 5, let event = await context.nextEvent() { later.append(String(decoding: event.payload, as: UTF8.self)) }
            #expect(later == (0..<5).map { "round-\(round)-\($0)-xxxxxxxxxxxxxxxx" })
        }
        #expect(kept.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<5).map { "first-\($0)" })
    }
}
