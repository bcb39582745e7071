import AgentModuleABI
import AgentTestSupport
import Glibc
import Testing
@testable import AgentCore

/// The delivery ring between two mappings of one memfd, as the supervisor and a worker map it.
@Suite(.ownThreads) struct SharedRingTests {
    static func pair(capacity: Int = 8192) throws -> (producer: SharedRing, consumer: SharedRing) {
        let (producer, fd) = try SharedRing.create(capacity: capacity)
        defer { close(fd) }
        return (producer, try SharedRing(mapping: fd, capacity: capacity))
    }

    private func pair(capacity: Int = 8192) throws -> (producer: SharedRing, consumer: SharedRing) { try Self.pair(capacity: capacity) }

    /// Publishes `frames` in the producer's ring and hands out every event of them through a
    /// receiver on the consumer's side, as a worker does; returns the receiver (its batch still
    /// taken) and the events.
    static func handOut(_ frames: UnsafeRawBufferPointer, _ producer: SharedRing, _ consumer: SharedRing) -> (RingReceiver, [agent_event]) {
        producer.write(frames)
        _ = producer.publish()
        let receiver = RingReceiver(ring: consumer, roomSignal: -1)
        var received: [agent_event] = []
        if receiver.take() {
            while let event = receiver.next() { received.append(event) }
        }
        return (receiver, received)
    }

    @Test func bytesWrittenAcrossTheEndReadBackContiguousInTheOtherMapping() throws {
        let (producer, consumer) = try pair()
        let first = [UInt8](repeating: 1, count: 5000)
        first.withUnsafeBytes { producer.write($0) }
        #expect(consumer.readable()?.count == 0, "nothing is visible before the publish")
        _ = producer.publish()
        #expect(consumer.readable().map { Array($0) } == first)
        _ = consumer.release(5000)
        #expect(producer.freeBytes == 8192)

        // 5000 + 6000 runs past the end of 8192: the mirror mapping keeps it in one piece.
        let second = (0..<6000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        second.withUnsafeBytes { producer.write($0) }
        _ = producer.publish()
        #expect(producer.freeBytes == 8192 - 6000)
        #expect(consumer.readable().map { Array($0) } == second)
    }

    @Test func aWaitingConsumerIsWokenOnceAndAWaitingProducerIsSignalledOnce() throws {
        let (producer, consumer) = try pair()
        #expect(consumer.prepareToWait(), "an empty ring lets the consumer sleep")
        [UInt8](repeating: 9, count: 100).withUnsafeBytes { producer.write($0) }
        #expect(producer.publish(), "the consumer waits: wake it")
        #expect(!producer.publish(), "one wake per wait")
        #expect(!consumer.prepareToWait(), "something is published: no sleeping")
        consumer.cancelWait()
        #expect(!producer.publish(), "a cancelled wait needs no wake")

        [UInt8](repeating: 9, count: 8092).withUnsafeBytes { producer.write($0) }
        _ = producer.publish()
        #expect(producer.freeBytes == 0)
        #expect(producer.awaitRoom(for: 10), "full: the producer waits for the consumer's signal")
        #expect(consumer.release(100), "the producer waits: signal it")
        #expect(!consumer.release(100), "one signal per wait")
        #expect(!producer.awaitRoom(for: 200), "room was freed meanwhile: write now")
    }

    @Test func countersOutOfRangeAreReportedNotTrusted() throws {
        let (producer, consumer) = try pair()
        // A consumer that releases what was never published: its tail passes the head.
        _ = consumer.release(100)
        #expect(producer.freeBytes == nil)

        let (writer, reader) = try pair()
        // A producer that writes past the free room: its head is more than a ring ahead.
        [UInt8](repeating: 1, count: 8192).withUnsafeBytes { writer.write($0) }
        [UInt8](repeating: 2, count: 8).withUnsafeBytes { writer.write($0) }
        _ = writer.publish()
        #expect(reader.readable() == nil)
    }

    /// What a dead worker's module never saw: the frames after the consumer's mark, for the
    /// next worker; a mark off the frames' boundaries or a frame written over keeps less.
    @Test func framesNeverHandedOutAreKeptForASuccessorAsFarAsTheyAreWellFormed() throws {
        let (producer, consumer) = try pair()
        let frames: [[UInt8]] = (0..<5).map { index in
            var frame: [UInt8] = []
            FrameCodec.append(.deliver, body: [UInt8](repeating: UInt8(index), count: 10 + index), to: &frame)
            return frame
        }
        Array(frames.joined()).withUnsafeBytes { producer.write($0) }
        _ = producer.publish()
        var kept = producer.unseenFrames()
        #expect(kept.frames == Array(frames.joined()) && kept.count == 5 && !kept.lost, "nothing was handed out: all are kept")

        _ = consumer.readable()
        consumer.markSeen(frames[0].count + frames[1].count)
        kept = producer.unseenFrames()
        #expect(kept.frames == Array(frames[2...].joined()) && kept.count == 3 && !kept.lost)

        // The first frame given back, the third handed out: the mark counts from the new tail.
        _ = consumer.release(frames[0].count)
        consumer.markSeen(frames[1].count + frames[2].count)
        kept = producer.unseenFrames()
        #expect(kept.frames == Array(frames[3...].joined()) && kept.count == 2 && !kept.lost)

        consumer.markSeen(3)
        kept = producer.unseenFrames()
        #expect(kept.frames.isEmpty && kept.count == 0 && kept.lost, "a mark inside a frame: nothing can be trusted")

        // The worker overwrote the fifth frame's kind: the fourth is kept, the fifth is lost.
        consumer.markSeen(frames[1].count + frames[2].count)
        let readable = try #require(consumer.readable())
        let fifth = readable.count - frames[4].count
        UnsafeMutableRawPointer(mutating: readable.baseAddress!).storeBytes(of: 0xEE, toByteOffset: fifth + 4, as: UInt8.self)
        kept = producer.unseenFrames()
        #expect(kept.frames == frames[3] && kept.count == 1 && kept.lost)
    }

    /// The worker holds the memfd too: shrunk under the supervisor's mapping, it would kill the
    /// supervisor with SIGBUS at its next write.
    @Test func theMemfdCannotBeResizedByWhoeverHoldsIt() throws {
        let (ring, fd) = try SharedRing.create(capacity: 8192)
        defer { close(fd) }
        #expect(ftruncate(fd, 4096) == -1 && errno == EPERM)
        #expect(ftruncate(fd, 1 << 20) == -1 && errno == EPERM)
        [UInt8](repeating: 1, count: 8192).withUnsafeBytes { ring.write($0) }
        #expect(ring.publish() == false)
    }

    @Test func aCapacityThatIsNotWholePagesIsRefused() {
        #expect(throws: SharedRing.Failure.self) { try SharedRing.create(capacity: 5000) }
    }

    @Test func aNameRepeatedInABatchIsHandedOutFromOnePlaceAndADifferentOneFromItsOwn() throws {
        let (producer, consumer) = try pair()
        let frames = FrameBuffer()
        // The last two types differ only in their ninth byte, in the masked word.
        let events: [(type: String, source: String)] = [
            ("tick", "clock"), ("tick", "clock"), ("tock", "clock"), ("abcdefghi", "clock"), ("abcdefghj", "clock2"), ("abcdefghj", "clock2"),
            ("abcdefghj", "clocl2"),
        ]
        for (index, event) in events.enumerated() {
            Array(event.type.utf8).withUnsafeBytes { type in
                [UInt8]("{}".utf8).withUnsafeBytes { payload in
                    Array(event.source.utf8).withUnsafeBytes { source in
                        EventFrame.appendDelivery(EventFrame.Emitted(type: type, timeNanoseconds: Int64(index), payload: payload), source: source, to: frames)
                    }
                }
            }
        }
        let (receiver, received) = frames.withUnsafeBytes { Self.handOut($0, producer, consumer) }
        #expect(received.count == events.count)
        func text(_ pointer: UnsafePointer<CChar>?, _ count: Int) -> String {
            String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        }
        #expect(received.map { text($0.type, $0.type_len) } == events.map(\.type))
        #expect(received.map { text($0.source, $0.source_len) } == events.map(\.source))
        #expect(received.map(\.time_ns) == Array(0..<7))
        #expect(received[1].type == received[0].type && received[1].source == received[0].source)
        #expect(received[2].type != received[0].type && received[2].source == received[0].source)
        #expect(received[4].type != received[3].type && received[4].source != received[3].source)
        #expect(received[5].type == received[4].type && received[5].source == received[4].source)
        #expect(received[6].type == received[5].type && received[6].source != received[5].source)

        // The next batch hands out its own places: the last batch's room was given back.
        frames.removeAll(keepingCapacity: true)
        Array("tick".utf8).withUnsafeBytes { type in
            Array("clock".utf8).withUnsafeBytes { source in
                EventFrame.appendDelivery(EventFrame.Emitted(type: type, timeNanoseconds: 7, payload: UnsafeRawBufferPointer(start: nil, count: 0)), source: source, to: frames)
            }
        }
        frames.withUnsafeBytes { producer.write($0) }
        _ = producer.publish()
        #expect(receiver.take())
        let next = try #require(receiver.next())
        #expect(text(next.type, next.type_len) == "tick" && next.time_ns == 7)
        #expect(next.type != received[0].type && next.source != received[0].source)
    }
}
