import Testing
@testable import AgentRuntime
@testable import AgentCore

@Suite struct FrameCodecTests {
    @Test func framesRoundTripWhenFedWholeOrByteByByte() throws {
        var stream: [UInt8] = []
        FrameCodec.append(.ready, body: [UInt8](), to: &stream)
        FrameCodec.append(.message, body: [2] + Array("disk almost full".utf8), to: &stream)
        FrameCodec.append(.saveState, body: [UInt8](repeating: 7, count: 70_000), to: &stream)

        var whole = FrameDecoder()
        let all = try whole.feed(stream)
        #expect(all.map(\.0) == [.ready, .message, .saveState])
        #expect(all[1].1 == [2] + Array("disk almost full".utf8))
        #expect(all[2].1.count == 70_000)

        var bytewise = FrameDecoder()
        var collected: [(FrameKind, [UInt8])] = []
        for byte in stream { collected += try bytewise.feed([byte]) }
        #expect(collected.map(\.0) == [.ready, .message, .saveState])
        #expect(collected[2].1 == all[2].1)
        #expect(bytewise.bufferedCount == 0)
    }

    @Test func aHoldKeepsItsFrameAndTheRestForTheNextFeedInOrder() throws {
        var stream: [UInt8] = []
        for n in 0..<6 { FrameCodec.append(.log, body: [UInt8(n)], to: &stream) }
        let firstFeed = stream.count - 4 // the last frame arrives split over two reads
        var decoder = FrameDecoder()
        var seen: [UInt8] = []
        var holdAt: UInt8? = 2
        func take(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) throws {
            if body.first == holdAt { throw FrameDecoder.Hold() }
            seen.append(body.first!)
        }
        try stream.prefix(firstFeed).withUnsafeBytes { try decoder.feed($0, take) }
        #expect(seen == [0, 1])
        #expect(decoder.isHolding)
        // Still holding: nothing more comes out, the new bytes join the held ones.
        try stream.dropFirst(firstFeed).withUnsafeBytes { try decoder.feed($0, take) }
        #expect(seen == [0, 1])
        holdAt = nil
        try decoder.feed(UnsafeRawBufferPointer(start: nil, count: 0), take)
        #expect(seen == [0, 1, 2, 3, 4, 5])
        #expect(!decoder.isHolding && decoder.bufferedCount == 0)
    }

    @Test func aHoldOnAFrameThatCompletesASplitOneKeepsItToo() throws {
        var stream: [UInt8] = []
        for n in 0..<3 { FrameCodec.append(.log, body: [UInt8(n), 9, 9], to: &stream) }
        var decoder = FrameDecoder()
        var seen: [UInt8] = []
        var holding = true
        func take(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) throws {
            if holding { throw FrameDecoder.Hold() }
            seen.append(body.first!)
        }
        try stream.prefix(3).withUnsafeBytes { try decoder.feed($0, take) }
        try stream.dropFirst(3).withUnsafeBytes { try decoder.feed($0, take) }
        #expect(seen.isEmpty && decoder.isHolding)
        holding = false
        try decoder.feed(UnsafeRawBufferPointer(start: nil, count: 0), take)
        #expect(seen == [0, 1, 2])
    }

    @Test func partialFrameIsKeptUntilTheRestArrives() throws {
        var stream: [UInt8] = []
        FrameCodec.append(.log, body: Array("hello".utf8), to: &stream)
        var decoder = FrameDecoder()
        #expect(try decoder.feed(Array(stream.prefix(7))).isEmpty)
        #expect(decoder.bufferedCount == 7)
        let rest = try decoder.feed(Array(stream.dropFirst(7)))
        #expect(rest.count == 1)
        #expect(rest[0].1 == Array("hello".utf8))
    }

    @Test func zeroLengthFrameIsAProtocolError() {
        var decoder = FrameDecoder()
        #expect(throws: FrameError.self) { try decoder.feed([0, 0, 0, 0, 1]) }
    }

    @Test func oversizedFrameIsRefusedBeforeItIsBuffered() {
        var decoder = FrameDecoder()
        var header: [UInt8] = []
        FrameCodec.appendUInt32(UInt32(FrameCodec.maxFrameLength + 1), to: &header)
        #expect(throws: FrameError.self) { try decoder.feed(header + [21]) }
    }

    @Test func emittedEventBecomesADeliveryNamingItsSource() throws {
        let type = Array("trade".utf8)
        let payload = Array(#"{"pair":"ETH/USD"}"#.utf8)
        var frame: [UInt8] = []
        type.withUnsafeBytes { t in
            payload.withUnsafeBytes { p in
                EventFrame.appendEmitted(type: t, timeNanoseconds: 1_700_000_000_123_456_789, payload: p, to: &frame)
            }
        }
        var decoder = FrameDecoder()
        let frames = try decoder.feed(frame)
        #expect(frames.count == 1 && frames[0].0 == .event)

        var delivery: [UInt8] = []
        try frames[0].1.withUnsafeBytes { body in
            let emitted = try EventFrame.parseEmitted(body)
            #expect(Array(emitted.type) == type)
            #expect(emitted.timeNanoseconds == 1_700_000_000_123_456_789)
            EventFrame.appendDelivery(emitted, source: Array("trades".utf8), to: &delivery)
        }
        let delivered = try decoder.feed(delivery)
        #expect(delivered.count == 1 && delivered[0].0 == .deliver)
        let event = try delivered[0].1.withUnsafeBytes { try EventFrame.parseDelivery($0) }
        #expect(event == EventFrame(type: "trade", source: "trades", timeNanoseconds: 1_700_000_000_123_456_789, payload: payload))
    }

    @Test func truncatedEventBodyIsAnError() {
        #expect(throws: FrameError.self) { try [UInt8]([5, 0, 65]).withUnsafeBytes { try EventFrame.parseEmitted($0) } }
        #expect(throws: FrameError.self) { try [UInt8]([1]).withUnsafeBytes { try EventFrame.parseDelivery($0) } }
    }

    @Test func deadWorkerKeepsOnlyTheDeliveriesItNeverSaw() {
        let module = ModuleLocation(name: "m", library: "/x", sourceDirectory: nil)
        let process = SupervisedProcess(PlannedProcess(name: "p", type: "t", kind: "monitor", module: module, settings: [:],
                                                       subscriptions: [], policy: ProcessPolicy()))
        for body in [[1], [2], [3]] as [[UInt8]] { FrameCodec.append(.deliver, body: body, to: &process.outgoing) }
        FrameCodec.append(.stop, body: [UInt8](), to: &process.outgoing)
        FrameCodec.append(.deliver, body: [4], to: &process.outgoing)
        // The first frame (6 bytes) went out whole, the second only in part.
        process.sent = 8
        let lost = process.discardSentFrames()
        #expect(lost == 1)
        var decoder = FrameDecoder()
        let kept = (try? decoder.feed(process.outgoing)) ?? []
        #expect(kept.map(\.1) == [[3], [4]])
        #expect(kept.allSatisfy { $0.0 == .deliver })
    }
}
