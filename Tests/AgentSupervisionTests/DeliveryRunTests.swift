import AgentLoop
import AgentModuleABI
@testable import AgentSupervision
import AgentTestSupport
import Glibc
import Testing
@testable import AgentCore

/// `deliverRun` frames: consecutive events of one source and type, their emitted frames
/// unchanged behind one header, read back by every receiver and handed over per event.
@Suite(.ownThreads) struct DeliveryRunTests {
    /// The `event` frame a worker emits.
    static func emitted(_ type: String, time: Int64, payload: [UInt8]) -> [UInt8] {
        let frame = FrameBuffer()
        Array(type.utf8).withUnsafeBytes { t in
            payload.withUnsafeBytes { EventFrame.appendEmitted(type: t, timeNanoseconds: time, payload: $0, to: frame) }
        }
        return frame.bytes
    }

    /// A run frame of `entries` (emitted frames) under `type` and `source`.
    static func run(_ type: String, _ source: String, _ entries: [[UInt8]]) -> [UInt8] {
        let frame = FrameBuffer()
        let held = Array(entries.joined()).withUnsafeBytes { body in
            Array(type.utf8).withUnsafeBytes { t in
                Array(source.utf8).withUnsafeBytes { EventFrame.appendRun(body, count: entries.count, type: t, source: $0, to: frame) }
            }
        }
        precondition(held == (entries.count, true), "a test's run is well-formed")
        return frame.bytes
    }

    static func delivery(_ type: String, _ source: String, time: Int64, payload: [UInt8]) -> [UInt8] {
        let frame = FrameBuffer()
        Array(type.utf8).withUnsafeBytes { t in
            payload.withUnsafeBytes { p in
                Array(source.utf8).withUnsafeBytes { EventFrame.appendDelivery(.init(type: t, timeNanoseconds: time, payload: p), source: $0, to: frame) }
            }
        }
        return frame.bytes
    }

    static func text(_ pointer: UnsafePointer<CChar>?, _ count: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    static func payload(_ event: agent_event) -> [UInt8] { Array(UnsafeRawBufferPointer(start: event.payload, count: event.payload_len)) }

    @Test func aRunReadsBackAsItsHeadersTypeAndSourceAndEachEntrysTimeAndPayload() throws {
        let entries = (0..<3).map { Self.emitted("tick", time: Int64(100 + $0), payload: Array("p\($0)".utf8)) }
        let frame = Self.run("tick", "clock", entries)
        #expect(frame[4] == FrameKind.deliverRun.rawValue && Int(frame[0]) | Int(frame[1]) << 8 == frame.count - 4)
        try frame.withUnsafeBytes { raw in
            #expect(EventFrame.deliveryEvents(raw, at: 0) == 3)
            let run = try EventFrame.parseRun(UnsafeRawBufferPointer(rebasing: raw[FrameCodec.headerLength...]))
            #expect(run.count == 3 && Array(run.type) == Array("tick".utf8) && Array(run.source) == Array("clock".utf8))
            var offset = 0
            var read: [(Int64, [UInt8])] = []
            while let entry = EventFrame.runEntry(run.entries, at: offset) {
                read.append((entry.time, Array(entry.payload)))
                offset = entry.next
            }
            #expect(offset == run.entries.count)
            #expect(read.map(\.0) == [100, 101, 102] && read.map(\.1) == (0..<3).map { Array("p\($0)".utf8) })
        }
        Self.delivery("tick", "clock", time: 1, payload: []).withUnsafeBytes { #expect(EventFrame.deliveryEvents($0, at: 0) == 1) }
    }

    /// Type and source are handed out as C strings from the header; an entry that is not a
    /// whole `event` frame ends the run there.
    @Test func aMalformedRunHeaderIsRefusedAndAMalformedEntryEndsTheRun() throws {
        let good = Self.run("a", "b", [Self.emitted("a", time: 0, payload: [])])
        let body = Array(good[FrameCodec.headerLength...])
        // count (4), type length (2), "a", NUL, source length (2), "b", NUL.
        for index in [7, 11] {
            var bad = body
            bad[index] = 0xFF
            #expect(throws: FrameError.self) { try bad.withUnsafeBytes { try EventFrame.parseRun($0) } }
        }
        #expect(throws: FrameError.self) { try Array(body[..<9]).withUnsafeBytes { try EventFrame.parseRun($0) } }
        #expect(throws: FrameError.self) { try [UInt8]([1, 0, 0, 0, 0, 0, 0, 0, 0]).withUnsafeBytes { try EventFrame.parseRun($0) } }

        let entry = Self.emitted("a", time: 7, payload: [1, 2])
        var wrongKind = entry
        wrongKind[4] = FrameKind.message.rawValue
        var typePastTheEnd = entry
        typePastTheEnd[5] = 200
        var longerThanTheRun = entry
        longerThanTheRun[0] += 1
        for bad in [wrongKind, typePastTheEnd, longerThanTheRun, Array(entry[..<6])] {
            (entry + bad).withUnsafeBytes { entries in
                let first = EventFrame.runEntry(entries, at: 0)
                #expect(first?.time == 7 && first.map { Array($0.payload) } == [1, 2])
                #expect(EventFrame.runEntry(entries, at: first?.next ?? 0) == nil)
            }
        }
    }

    @Test func aRunInTheRingIsHandedOutEntryByEntryAmongSingleDeliveries() throws {
        let (producer, consumer) = try SharedRingTests.pair()
        let frames = Self.delivery("tick", "clock", time: 1, payload: [1])
            + Self.run("tock", "clock", (2...4).map { Self.emitted("tock", time: Int64($0), payload: [UInt8($0)]) })
            + Self.delivery("tick", "clock", time: 5, payload: [5])
        let (receiver, received) = frames.withUnsafeBytes { SharedRingTests.handOut($0, producer, consumer) }
        #expect(received.map { Self.text($0.type, $0.type_len) } == ["tick", "tock", "tock", "tock", "tick"])
        #expect(received.allSatisfy { Self.text($0.source, $0.source_len) == "clock" })
        #expect(received.map(\.time_ns) == [1, 2, 3, 4, 5] && received.map(Self.payload) == (1...5).map { [UInt8($0)] })
        // C strings: the NUL follows the run header's type and source.
        #expect(received[1].type[4] == 0 && received[1].source[5] == 0)
        #expect(received[1].type == received[3].type, "one place for the run's type")
        #expect(!receiver.hasBatch)
    }

    /// The supervisor copies a run out of the source's emit ring and checks the copy: entries
    /// the source changed after the first check are left out, and said to be.
    @Test func aRunIsCheckedAgainInItsCopyAndKeepsOnlyItsWellFormedFirstEntries() throws {
        let entries = (0..<3).map { Self.emitted("tock", time: Int64($0), payload: [UInt8($0)]) }
        func append(_ bytes: [UInt8], count: Int = 3) -> (buffer: FrameBuffer, held: (count: Int, intact: Bool)) {
            let buffer = FrameBuffer()
            buffer.append(contentsOf: [7, 7])
            let held = bytes.withUnsafeBytes { raw in
                Array("tock".utf8).withUnsafeBytes { t in
                    Array("clock".utf8).withUnsafeBytes { EventFrame.appendRun(raw, count: count, type: t, source: $0, to: buffer) }
                }
            }
            return (buffer, held)
        }
        let whole = append(Array(entries.joined()))
        #expect(whole.held == (3, true) && whole.buffer.bytes == [7, 7] + Self.run("tock", "clock", entries))

        var changed = Array(entries.joined())
        changed[entries[0].count + 4] = FrameKind.log.rawValue
        let first = append(changed)
        #expect(first.held == (1, false) && first.buffer.bytes == [7, 7] + Self.run("tock", "clock", [entries[0]]))

        changed[4] = FrameKind.log.rawValue
        let none = append(changed)
        #expect(none.held == (0, false) && none.buffer.bytes == [7, 7], "no frame without an entry")

        // Well-formed, but not the three frames that were checked.
        let fewer = append(Array(entries[..<2].joined()) + [0, 0, 0, 0])
        #expect(fewer.held == (2, false) && fewer.buffer.bytes == [7, 7] + Self.run("tock", "clock", Array(entries[..<2])))
    }

    /// A worker that dies in the middle of a run: its successor gets the run's other entries
    /// as a run, and the frames after it.
    @Test func aDeadWorkersUnseenEventsStartInsideARunAtItsMark() throws {
        let (producer, consumer) = try SharedRingTests.pair()
        let entries = (0..<4).map { Self.emitted("tock", time: Int64($0), payload: [UInt8($0)]) }
        let last = Self.delivery("tick", "clock", time: 9, payload: [9])
        (Self.run("tock", "clock", entries) + last).withUnsafeBytes { producer.write($0) }
        _ = producer.publish()
        let receiver = RingReceiver(ring: consumer, roomSignal: -1)
        #expect(receiver.take())
        #expect(receiver.next()?.time_ns == 0 && receiver.next()?.time_ns == 1)
        receiver.markHandedOut()
        #expect(receiver.hasBatch, "two of the run's entries and a delivery are left")

        let kept = producer.unseenFrames()
        #expect(kept.frames == Self.run("tock", "clock", Array(entries[2...])) + last)
        #expect(kept.count == 3 && !kept.lost)

        // Handed out to its end: the mark moves past the run.
        #expect(receiver.next()?.time_ns == 2 && receiver.next()?.time_ns == 3)
        receiver.markHandedOut()
        let rest = producer.unseenFrames()
        #expect(rest.frames == last && rest.count == 1 && !rest.lost)

        // A run whose count is not its number of entries is not well-formed: nothing from
        // there on is kept.
        consumer.markSeen(0)
        let readable = try #require(consumer.readable())
        UnsafeMutableRawPointer(mutating: readable.baseAddress!).storeBytes(of: 5, toByteOffset: FrameCodec.headerLength, as: UInt8.self)
        let miscounted = producer.unseenFrames()
        #expect(miscounted.frames.isEmpty && miscounted.count == 0 && miscounted.lost)
        UnsafeMutableRawPointer(mutating: readable.baseAddress!).storeBytes(of: 4, toByteOffset: FrameCodec.headerLength, as: UInt8.self)

        // A mark inside an entry cannot be trusted: nothing is kept.
        consumer.markSeen(EventFrame.runHeaderLength(typeCount: 4, sourceCount: 5) + 3)
        let none = producer.unseenFrames()
        #expect(none.frames.isEmpty && none.count == 0 && none.lost)
    }

    /// On the socket (no rings), the reader thread turns a run into one record per entry.
    @Test func theInboxTurnsARunIntoOneEventPerEntry() throws {
        let inbox = EventInbox()
        let frame = Self.run("tock", "clock", (0..<3).map { Self.emitted("tock", time: Int64($0), payload: [UInt8($0), 0xAA]) })
        #expect(frame.withUnsafeBytes { inbox.collectRun(UnsafeRawBufferPointer(rebasing: $0[FrameCodec.headerLength...])) })
        _ = inbox.publish()
        #expect(inbox.takeAll() == frame.count, "the frame's bytes are acknowledged as taken")
        var received: [agent_event] = []
        while let event = inbox.next() { received.append(event) }
        #expect(received.map { Self.text($0.type, $0.type_len) } == ["tock", "tock", "tock"])
        #expect(received.allSatisfy { Self.text($0.source, $0.source_len) == "clock" && $0.type[4] == 0 && $0.source[5] == 0 })
        #expect(received.map(\.time_ns) == [0, 1, 2] && received.map(Self.payload) == (0..<3).map { [UInt8($0), 0xAA] })

        // A malformed entry: the entries before it are delivered, and the run reported bad.
        var broken = Self.run("tock", "clock", [Self.emitted("tock", time: 5, payload: []), Self.emitted("tock", time: 6, payload: [])])
        let secondEntry = broken.count - Self.emitted("tock", time: 6, payload: []).count
        broken[secondEntry + 4] = FrameKind.log.rawValue
        #expect(!broken.withUnsafeBytes { inbox.collectRun(UnsafeRawBufferPointer(rebasing: $0[FrameCodec.headerLength...])) })
        _ = inbox.publish()
        _ = inbox.takeAll()
        #expect(inbox.next()?.time_ns == 5 && inbox.next() == nil)
    }

    /// Dropping the oldest and losing a half-written frame are counted in events, not frames.
    @Test func droppedAndLostRunsCountTheirEvents() throws {
        let loop = EventLoop()
        loop.isolated {
            let module = ModuleLocation(name: "m", library: "/x", sourceDirectory: nil)
            let process = SupervisedProcess(PlannedProcess(name: "p", type: "t", kind: "monitor", module: module, settings: [:],
                                                           subscriptions: [], policy: ProcessPolicy()))
            let first = Self.run("tock", "clock", (0..<5).map { Self.emitted("tock", time: Int64($0), payload: []) })
            let second = Self.delivery("tick", "clock", time: 5, payload: [])
            let third = Self.run("tock", "clock", (6..<9).map { Self.emitted("tock", time: Int64($0), payload: []) })
            for frame in [first, second, third] { frame.withUnsafeBytes { process.outgoing.append($0) } }
            #expect(process.dropOldestDeliveries(freeing: first.count + 1) == 6, "the run's five events and the delivery")
            #expect(process.outgoing.bytes == third)
            // Half of the last run written to the socket when the worker died: its three events are lost.
            process.noteSent(third.count / 2)
            #expect(process.discardSentFrames() == 3)
            #expect(process.outgoing.isEmpty)
        }
    }
}
