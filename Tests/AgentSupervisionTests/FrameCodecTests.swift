import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
import Testing
@testable import AgentCore

@Suite(.ownThreads) struct FrameCodecTests {
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
        let frame = FrameBuffer()
        type.withUnsafeBytes { t in
            payload.withUnsafeBytes { p in
                EventFrame.appendEmitted(type: t, timeNanoseconds: 1_700_000_000_123_456_789, payload: p, to: frame)
            }
        }
        var decoder = FrameDecoder()
        let frames = try decoder.feed(frame.bytes)
        #expect(frames.count == 1 && frames[0].0 == .event)

        let delivery = FrameBuffer()
        try frames[0].1.withUnsafeBytes { body in
            let emitted = try EventFrame.parseEmitted(body)
            #expect(Array(emitted.type) == type)
            #expect(emitted.timeNanoseconds == 1_700_000_000_123_456_789)
            Array("trades".utf8).withUnsafeBytes { EventFrame.appendDelivery(emitted, source: $0, to: delivery) }
        }
        let delivered = try decoder.feed(delivery.bytes)
        #expect(delivered.count == 1 && delivered[0].0 == .deliver)
        let event = try delivered[0].1.withUnsafeBytes { try EventFrame.parseDelivery($0) }
        #expect(event == EventFrame(type: "trade", source: "trades", timeNanoseconds: 1_700_000_000_123_456_789, payload: payload))
    }

    @Test func truncatedEventBodyIsAnError() {
        #expect(throws: FrameError.self) { try [UInt8]([5, 0, 65]).withUnsafeBytes { try EventFrame.parseEmitted($0) } }
        #expect(throws: FrameError.self) { try [UInt8]([1]).withUnsafeBytes { try EventFrame.parseDelivery($0) } }
    }

    /// A worker hands type and source out as C strings where the frame lies: a delivery whose
    /// lengths add up but that lacks the NUL after either is refused, not read past.
    @Test func deliveryWithoutItsNULsIsAnError() throws {
        // type "a", source "b", time 0, no payload; 0xFF where each NUL belongs.
        let good: [UInt8] = [1, 0, 97, 0, 1, 0, 98, 0] + [UInt8](repeating: 0, count: 8)
        #expect(try good.withUnsafeBytes { try EventFrame.parseDelivery($0) } == EventFrame(type: "a", source: "b", timeNanoseconds: 0, payload: []))
        for index in [3, 7] {
            var bad = good
            bad[index] = 0xFF
            #expect(throws: FrameError.self) { try bad.withUnsafeBytes { try EventFrame.parseDelivery($0) } }
        }
    }

    @Test func deadWorkerKeepsOnlyTheDeliveriesItNeverSaw() {
        let loop = EventLoop()
        loop.isolated {
            let module = ModuleLocation(name: "m", library: "/x", sourceDirectory: nil)
            let process = SupervisedProcess(PlannedProcess(name: "p", type: "t", kind: "monitor", module: module, settings: [:],
                                                           subscriptions: [], policy: ProcessPolicy()))
            for body in [[1], [2], [3], [4]] as [[UInt8]] { FrameCodec.append(.deliver, body: body, to: process.outgoing) }
            // The dead worker's control frames (here a stop) are not for its successor.
            FrameCodec.append(.stop, body: [UInt8](), to: process.control)
            // The first frame (6 bytes) went out whole, the second only in part.
            process.noteSent(8)
            let lost = process.discardSentFrames()
            #expect(lost == 1)
            #expect(process.control.isEmpty && process.pendingBytes == 12)
            var decoder = FrameDecoder()
            let kept = (try? decoder.feed(process.outgoing.bytes)) ?? []
            #expect(kept.map(\.1) == [[3], [4]])
            #expect(kept.allSatisfy { $0.0 == .deliver })
        }
    }

    @Test func writtenBacklogIsRemovedAtAFrameBoundaryAndThePartlyWrittenFrameKept() throws {
        let loop = EventLoop()
        try loop.isolated {
            let module = ModuleLocation(name: "m", library: "/x", sourceDirectory: nil)
            let process = SupervisedProcess(PlannedProcess(name: "p", type: "t", kind: "monitor", module: module, settings: [:],
                                                           subscriptions: [], policy: ProcessPolicy()))
            // 3 MB of 1 KiB deliveries, numbered.
            let count = 3 << 10
            for index in 0..<count {
                var body = [UInt8](repeating: 0, count: 1019)
                body[0] = UInt8(index & 0xFF)
                body[1] = UInt8(index >> 8)
                FrameCodec.append(.deliver, body: body, to: process.outgoing)
            }
            let frameSize = process.outgoing.count / count
            // Written in uneven pieces, the last one ending inside a frame.
            var written = 0
            let target = 2 * (1 << 20) + 100
            while written < target {
                let piece = min(70_001, target - written)
                process.noteSent(piece)
                written += piece
            }
            #expect(process.pendingBytes == count * frameSize - target)
            #expect(process.outgoing.count < count * frameSize, "the written prefix was not removed")
            // What is left begins at a frame boundary: the partly written frame is lost, the
            // rest is kept in order.
            #expect(process.discardSentFrames() == 1)
            var decoder = FrameDecoder()
            let kept = try decoder.feed(process.outgoing.bytes)
            let first = target / frameSize + 1
            #expect(kept.count == count - first)
            #expect(kept.first.map { Int($0.1[0]) | Int($0.1[1]) << 8 } == first)
            #expect(kept.last.map { Int($0.1[0]) | Int($0.1[1]) << 8 } == count - 1)
        }
    }

    @Test func frameBufferGrowsMovesAndSwaps() {
        let buffer = FrameBuffer()
        #expect(buffer.isEmpty)
        for value in 0..<1000 { buffer.append(UInt8(value % 251)) }
        buffer.append(contentsOf: (0..<10).lazy.map { UInt8($0) })
        #expect(buffer.count == 1010)
        #expect(Array(buffer.bytes.prefix(3)) == [0, 1, 2] && Array(buffer.bytes.suffix(2)) == [8, 9])
        buffer.removeSubrange(1..<999)
        #expect(buffer.bytes == [0, UInt8(999 % 251)] + (0..<10).map { UInt8($0) })
        buffer.prepend([7, 7])
        #expect(Array(buffer.bytes.prefix(3)) == [7, 7, 0])
        let other = FrameBuffer(capacity: 4)
        other.append(contentsOf: [1, 2, 3] as [UInt8])
        buffer.swapContents(with: other)
        #expect(buffer.bytes == [1, 2, 3] && other.count == 14)
        other.removeAll(keepingCapacity: false)
        #expect(other.isEmpty && other.capacity == 0)
        other.append(contentsOf: [5] as [UInt8])
        #expect(other.bytes == [5])
    }
}
