import AgentModuleABI
import CAgentSystem
import Glibc

/// The worker's side of its delivery ring (see ``SharedRing``): takes a batch of frames and
/// hands them out as `agent_event`s that point into the ring itself. Their memory stays
/// untouched until the batch is released, at the receive after the last of them: the
/// lifetime `agent_event` promises. Receiving thread only.
final class RingReceiver {
    private let ring: SharedRing
    /// The eventfd on which the supervisor waits for freed room.
    private let roomSignal: Int32
    /// The current batch: it started at `start`; frames from `cursor` to `end` (what was
    /// published when it was taken) are not handed out yet. It ends at `end` or once
    /// `batchLimit` bytes were handed out, whichever comes first; what was handed out is given
    /// back at the next take.
    private var start: UnsafeRawPointer?
    private var cursor: UnsafeRawPointer?
    private var end: UnsafeRawPointer?
    /// A batch is at most this much of the ring (and one frame), so that the supervisor can
    /// fill the rest while the module works through it.
    private let batchLimit: Int
    /// How far ahead of the frame being handed out its successors are prefetched.
    private static let prefetchDistance = 512
    /// The type and source handed out last from this batch: a later event with the same ones
    /// gets the same pointers, so that the module's SDK knows them without comparing bytes.
    private var lastType: (pointer: UnsafeRawPointer, count: Int)?
    private var lastSource: (pointer: UnsafeRawPointer, count: Int)?
    /// The `deliverRun` frame being handed out (its entries, the next one's offset in them,
    /// and the type and source in its header), if any.
    private var run: (entries: UnsafeRawBufferPointer, next: Int, type: UnsafeRawBufferPointer, source: UnsafeRawBufferPointer)?

    init(ring: SharedRing, roomSignal: Int32) {
        self.ring = ring
        self.roomSignal = roomSignal
        batchLimit = ring.capacity / 4
    }

    deinit { if roomSignal >= 0 { close(roomSignal) } }

    /// Whether frames of the current batch are left.
    var hasBatch: Bool {
        if run != nil { return true }
        guard let start, let cursor, let end else { return false }
        return cursor < end && cursor - start < batchLimit
    }

    /// Releases the last batch and takes the next whole frames, if any. False when the ring
    /// is empty. A head out of range (the supervisor broke the protocol) ends the worker.
    func take() -> Bool {
        releaseBatch()
        guard let readable = ring.readable() else {
            let message = "agent-worker: the delivery ring's head is out of range\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            exit(1)
        }
        guard readable.count > 0 else { return false }
        ring.cancelWait()
        // The supervisor publishes whole frames only: the batch's frames are found as they
        // are handed out, in one pass.
        start = readable.baseAddress
        cursor = readable.baseAddress
        end = readable.baseAddress! + readable.count
        return true
    }

    /// The next event of the current batch, or nil when it is used up. Frames that are not
    /// well-formed deliveries are skipped.
    func next() -> agent_event? {
        if let event = nextInRun() { return event }
        while let at = cursor, at != end, at - start! < batchLimit {
            let remaining = end! - at
            let raw = UnsafeRawBufferPointer(start: at, count: remaining)
            guard remaining >= FrameCodec.headerLength else {
                cursor = end
                return nil
            }
            let frame = 4 + Int(FrameCodec.readUInt32(raw, at: 0))
            guard frame >= FrameCodec.headerLength, frame <= remaining else {
                cursor = end
                return nil
            }
            cursor = at + frame
            // The frames ahead were written by the supervisor on another core: their lines are
            // fetched while this one is handed out (the header load of each frame had missed).
            agent_prefetch(at + Self.prefetchDistance)
            if raw[4] == FrameKind.deliverRun.rawValue {
                guard let parts = try? EventFrame.parseRun(UnsafeRawBufferPointer(rebasing: raw[FrameCodec.headerLength..<frame])) else { continue }
                run = (parts.entries, 0, parts.type, parts.source)
                if let event = nextInRun() { return event }
                continue
            }
            guard raw[4] == FrameKind.deliver.rawValue,
                  let event = try? EventFrame.parseDelivered(UnsafeRawBufferPointer(rebasing: raw[FrameCodec.headerLength..<frame]))
            else { continue }
            let type = Self.recurring(event.type, &lastType)
            let source = Self.recurring(event.source, &lastSource)
            // parseDelivered checked the NULs after type and source.
            return agent_event(
                type: type.assumingMemoryBound(to: CChar.self), type_len: event.type.count,
                source: source.assumingMemoryBound(to: CChar.self), source_len: event.source.count,
                time_ns: event.timeNanoseconds,
                payload: event.payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload_len: event.payload.count)
        }
        return nil
    }

    /// The next event of the run being handed out; nil (and the run is over) when none is left
    /// or an entry is malformed (the rest of the run is skipped).
    @inline(__always)
    private func nextInRun() -> agent_event? {
        guard let current = run else { return nil }
        guard let entry = EventFrame.runEntry(current.entries, at: current.next) else {
            run = nil
            return nil
        }
        // Over once its last entry is handed out: `hasBatch` must not promise more.
        if entry.next == current.entries.count { run = nil } else { run!.next = entry.next }
        agent_prefetch(current.entries.baseAddress! + entry.next + Self.prefetchDistance)
        // parseRun checked the NULs after type and source.
        return agent_event(
            type: current.type.baseAddress!.assumingMemoryBound(to: CChar.self), type_len: current.type.count,
            source: current.source.baseAddress!.assumingMemoryBound(to: CChar.self), source_len: current.source.count,
            time_ns: entry.time,
            payload: entry.payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload_len: entry.payload.count)
    }

    /// Where `name` (a type or source in a delivery frame of the current batch) starts, or
    /// where the same bytes were handed out last (`last`), which then stays.
    @inline(__always)
    private static func recurring(_ name: UnsafeRawBufferPointer, _ last: inout (pointer: UnsafeRawPointer, count: Int)?) -> UnsafeRawPointer {
        let start = name.baseAddress!
        if let previous = last, previous.count == name.count, sameName(previous.pointer, start, name.count) { return previous.pointer }
        last = (start, name.count)
        return start
    }

    /// Whether `count` bytes at `a` and `b` are equal, compared 8 at a time. Both are names in
    /// delivery frames, followed in their frame by at least a NUL and the 8-byte time, so the
    /// last word may read up to 7 bytes past them, never past the frame; those are masked off.
    @inline(__always)
    private static func sameName(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        var index = 0
        while count - index >= 8 {
            guard a.loadUnaligned(fromByteOffset: index, as: UInt64.self) == b.loadUnaligned(fromByteOffset: index, as: UInt64.self) else { return false }
            index += 8
        }
        let rest = count - index
        guard rest > 0 else { return true }
        // Loaded as little-endian, so that the name's bytes are the low ones on any machine.
        let mask = (UInt64(1) << UInt64(rest * 8)) &- 1
        let x = UInt64(littleEndian: a.loadUnaligned(fromByteOffset: index, as: UInt64.self))
        let y = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: index, as: UInt64.self))
        return (x ^ y) & mask == 0
    }

    /// Records that what `next()` returned so far was handed to the module: if the worker dies,
    /// the supervisor keeps the frames after it for the next worker.
    func markHandedOut() {
        guard let start, let cursor else { return }
        // Inside a run: up to its next entry (the supervisor keeps the rest of the run).
        if let run {
            ring.markSeen(run.entries.baseAddress! + run.next - start)
        } else {
            ring.markSeen(cursor - start)
        }
    }

    /// Gives the last batch's room back, and tells the supervisor if it waits for it.
    func releaseBatch() {
        guard let start, let cursor, cursor > start else { return }
        let release = cursor - start
        // The names handed out lie in the room given back.
        lastType = nil
        lastSource = nil
        run = nil
        self.start = nil
        self.cursor = nil
        end = nil
        if ring.release(release) {
            var one: UInt64 = 1
            _ = write(roomSignal, &one, 8)
        }
    }

    /// Before sleeping: asks for a wake at the next publish. False when there is something
    /// to take already.
    func prepareToWait() -> Bool { ring.prepareToWait() }

    /// Whether the ring holds frames not handed out yet (beyond the current batch's). A head
    /// out of range counts: the next take ends the worker.
    var hasPublished: Bool {
        guard let readable = ring.readable() else { return true }
        guard let start, let cursor else { return readable.count > 0 }
        return readable.count > cursor - start
    }

    /// Before sleeping on the ring's word (``sleep(timeoutNanoseconds:)``): the next publish
    /// wakes it. The caller then looks for frames once more (``hasPublished``).
    func announceSleep() { ring.announceSleep() }

    /// Sleeps until the supervisor publishes, ``wakeSleeper()`` or the timeout.
    func sleep(timeoutNanoseconds: Int64) { ring.sleepUntilPublished(timeoutNanoseconds: timeoutNanoseconds) }

    /// After a sleep or a wait: the supervisor need not wake this side.
    func cancelWait() { ring.cancelWait() }

    /// Wakes the receiving thread if it sleeps on the ring's word. Any thread.
    func wakeSleeper() { ring.wakeSleeper() }
}
