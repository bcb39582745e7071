import CAgentSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A ring of whole frames in memory shared by the supervisor and one worker: how deliveries
/// reach a worker (the supervisor produces, the worker consumes) and how the worker's frames
/// reach the supervisor (its emit ring, the other way round), without a system call or a
/// kernel copy per batch.
///
/// The memory is a memfd mapped as a header page, the data, and the data again right after
/// it, so every frame is contiguous whatever its place. The header holds the producer's
/// `head` and the consumer's `tail` (byte counts since the start, never wrapping back), and
/// two flags that replace polling: the consumer raises `consumerWaiting` before it sleeps, so
/// the producer's next publish wakes it; the producer raises `producerWaiting` when the ring
/// is full, so the consumer's next release signals it. The worker signals the supervisor on
/// an eventfd that came with the rings; the supervisor signals the worker with a
/// ``FrameKind/wake`` frame on the socket (deliveries), or wakes a worker's thread asleep on the
/// `consumerWaiting` word itself (a futex: ``sleepUntilPublished(timeoutNanoseconds:)``), or
/// signals a second eventfd (room in the emit ring, for the worker's writer thread, which must
/// not depend on its reader thread). Each
/// side stores its counter, then a full fence, then reads the other's flag, so a wakeup cannot
/// be lost between a check and a sleep.
///
/// A delivery ring's consumer also records how far it handed events to its module (`seen`, a
/// frame boundary or one between two entries of a run): when a worker dies, the events after
/// that point were never seen, and the supervisor keeps them for the next worker
/// (``unseenFrames()``).
///
/// The ring holds at most ``capacity`` bytes; a frame larger than that goes on the socket.
// @unchecked: a raw pointer into memory shared with another process, whose ordering is the
// ring's own (atomics and fences on its words, one producer and one consumer).
public final class SharedRing: @unchecked Sendable {
    /// Bytes before the data: the counters and flags, each on its own cache line.
    public static let headerSize = 4096
    /// The ring's size for a worker's deliveries: the most that is in flight to it.
    public static let defaultCapacity = 4 << 20
    /// The size of a worker's emit ring (the worker produces, the supervisor consumes).
    public static let emitCapacity = 1 << 20

    public let capacity: Int
    private let base: UnsafeMutableRawPointer
    private var data: UnsafeMutableRawPointer { base + Self.headerSize }
    private var headWord: UnsafeMutableRawPointer { base }
    private var tailWord: UnsafeMutableRawPointer { base + 64 }
    private var consumerWaitingWord: UnsafeMutableRawPointer { base + 128 }
    private var producerWaitingWord: UnsafeMutableRawPointer { base + 192 }
    private var seenWord: UnsafeMutableRawPointer { base + 256 }
    /// Threads of this process asleep on the consumer's word (``sleepUntilPublished(timeoutNanoseconds:)``).
    private let sleepers = Atomic<Int>(0)
    /// The producer's head (only it writes the shared one).
    private var head: UInt64 = 0
    /// The consumer's tail (only it writes the shared one).
    private var tail: UInt64 = 0

    /// Why a ring could not be made or mapped.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Makes a ring; returns it and its memfd, to be passed to the consumer and then closed.
    public static func create(capacity: Int = defaultCapacity) throws -> (ring: SharedRing, fd: Int32) {
        let fd = agent_ring_create(headerSize, capacity)
        guard fd >= 0 else { throw Failure(description: "memfd_create: \(String(cString: strerror(errno)))") }
        do {
            return (try SharedRing(mapping: fd, capacity: capacity), fd)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Maps the ring behind `fd` (the caller still owns and closes `fd`).
    public init(mapping fd: Int32, capacity: Int) throws {
        guard capacity > 0, capacity % Int(getpagesize()) == 0 else {
            throw Failure(description: "ring capacity \(capacity) is not a multiple of the page size")
        }
        guard let base = agent_ring_map(fd, Self.headerSize, capacity) else {
            throw Failure(description: "mmap of the ring: \(String(cString: strerror(errno)))")
        }
        self.base = base
        self.capacity = capacity
        head = agent_load_acquire_u64(base)
        tail = agent_load_acquire_u64(base + 64)
    }

    deinit { agent_ring_unmap(base, Self.headerSize, capacity) }

    // MARK: Producer

    /// Bytes the producer may write now, or nil when the consumer's tail is out of range (a
    /// worker that broke the protocol).
    public var freeBytes: Int? {
        let used = head &- agent_load_acquire_u64(tailWord)
        guard used <= UInt64(capacity) else { return nil }
        return capacity - Int(used)
    }

    /// Copies whole frames after the head; they are not visible until ``publish()``. The
    /// caller checked ``freeBytes``.
    public func write(_ frames: UnsafeRawBufferPointer) {
        guard frames.count > 0 else { return }
        (data + Int(head % UInt64(capacity))).copyMemory(from: frames.baseAddress!, byteCount: frames.count)
        head += UInt64(frames.count)
    }

    /// Makes what was written visible. True when the consumer was waiting for it and must be
    /// signalled by the caller; a consumer asleep on the ring's own word
    /// (``sleepUntilPublished(timeoutNanoseconds:)``) is woken here, and needs nothing more.
    public func publish() -> Bool {
        agent_store_release_u64(headWord, head)
        agent_fence()
        guard agent_load_u32(consumerWaitingWord) != 0 else { return false }
        let waiting = agent_exchange_u32(consumerWaitingWord, 0)
        if waiting == Self.asleep { agent_futex_wake_shared(consumerWaitingWord) }
        return waiting != 0 && waiting != Self.asleep
    }

    /// Whether the consumer asked to be woken at the next publish: a publish now would cost the
    /// producer a signal. A hint only (the consumer may ask right after); ``publish()`` decides.
    public var consumerWaits: Bool { agent_load_u32(consumerWaitingWord) != 0 }

    /// Whether the consumer sleeps (or is about to) on the ring's word, so that a publish
    /// wakes it with no signal on the side. A hint, as ``consumerWaits``.
    public var consumerSleeps: Bool { agent_load_u32(consumerWaitingWord) == Self.asleep }

    /// Asks the consumer to signal once it frees room. False when at least `needed` bytes are
    /// free already (no signal may come: write again now).
    public func awaitRoom(for needed: Int) -> Bool {
        agent_store_u32(producerWaitingWord, 1)
        agent_fence()
        guard let free = freeBytes else { return true }
        return free < needed
    }

    /// A copy of the whole frames published but never handed to the consumer's module (after
    /// its `seen` mark), for a successor: what a dead worker's module did not see. A mark inside
    /// a `deliverRun` frame, between two of its entries, keeps the rest of that run as a run of
    /// its own. Frames are checked as they are walked, in a private copy, since a worker can
    /// write to the ring: the copy stops at the first frame that is not a well-formed delivery,
    /// and a mark that is out of range or not on a frame or entry boundary keeps nothing.
    /// `count` is the number of events kept; `lost` is true when anything unseen was left out.
    public func unseenFrames() -> (frames: [UInt8], count: Int, lost: Bool) {
        let tail = agent_load_acquire_u64(tailWord)
        let seen = agent_load_acquire_u64(seenWord)
        guard head &- tail <= UInt64(capacity), seen >= tail, seen <= head else { return ([], 0, head != tail) }
        // Copied first and checked in the copy: a process that still maps the ring (a child of
        // the dead worker that escaped its process group) could change a frame between a check
        // and a second read, and hand the supervisor's queue a length it does not hold.
        let published = Array(UnsafeRawBufferPointer(start: data + Int(tail % UInt64(capacity)), count: Int(head - tail)))
        let seenOffset = Int(seen - tail)
        let kept = FrameBuffer()
        var count = 0
        var reached = seenOffset == 0
        var at = 0
        published.withUnsafeBytes { raw in
            while raw.count - at >= FrameCodec.headerLength {
                let frame = 4 + Int(FrameCodec.readUInt32(raw, at: at))
                guard frame >= FrameCodec.headerLength, frame <= raw.count - at else { break }
                let framed = UnsafeRawBufferPointer(rebasing: raw[at..<(at + frame)])
                if raw[at + 4] == FrameKind.deliver.rawValue {
                    if reached {
                        kept.append(framed)
                        count += 1
                    }
                } else if raw[at + 4] == FrameKind.deliverRun.rawValue,
                          let run = try? EventFrame.parseRun(UnsafeRawBufferPointer(rebasing: framed[FrameCodec.headerLength...])) {
                    // Where the entries start in `raw`, and the offsets of their ends.
                    let entriesAt = at + frame - run.entries.count
                    var ends: [Int] = []
                    var offset = 0
                    while let entry = EventFrame.runEntry(run.entries, at: offset) {
                        offset = entry.next
                        ends.append(entriesAt + offset)
                    }
                    guard offset == run.entries.count, ends.count == run.count else { break }
                    if reached {
                        kept.append(framed)
                        count += ends.count
                    } else if seenOffset > at, seenOffset < at + frame, let index = ends.firstIndex(of: seenOffset) {
                        // The module saw the run's first entries: the others go on as a run.
                        let rest = UnsafeRawBufferPointer(rebasing: raw[seenOffset..<(at + frame)])
                        count += EventFrame.appendRun(rest, count: ends.count - index - 1, type: run.type, source: run.source, to: kept).count
                        reached = true
                    }
                } else {
                    break
                }
                at += frame
                if at == seenOffset { reached = true }
            }
        }
        guard reached else { return ([], 0, true) }
        return (kept.bytes, count, at < published.count)
    }

    // MARK: Consumer

    /// The published bytes not yet released, from the tail (whole frames), or nil when the
    /// producer's head is out of range.
    public func readable() -> UnsafeRawBufferPointer? {
        let published = agent_load_acquire_u64(headWord)
        let count = published &- tail
        guard count <= UInt64(capacity) else { return nil }
        return UnsafeRawBufferPointer(start: data + Int(tail % UInt64(capacity)), count: Int(count))
    }

    /// Gives `count` bytes from the tail back to the producer. True when it was waiting for
    /// room: the caller then signals it.
    public func release(_ count: Int) -> Bool {
        guard count > 0 else { return false }
        tail += UInt64(count)
        agent_store_release_u64(tailWord, tail)
        agent_fence()
        return agent_load_u32(producerWaitingWord) != 0 && agent_exchange_u32(producerWaitingWord, 0) != 0
    }

    /// Records that the frames up to `count` bytes past the tail were handed to the module
    /// (read by the producer only once the consumer is dead).
    public func markSeen(_ count: Int) {
        agent_store_release_u64(seenWord, tail + UInt64(count))
    }

    /// Before the consumer sleeps: asks the producer to wake it at its next publish. False
    /// when something was published meanwhile (read it instead of sleeping).
    public func prepareToWait() -> Bool {
        agent_store_u32(consumerWaitingWord, 1)
        agent_fence()
        return agent_load_acquire_u64(headWord) == tail
    }

    /// The consumer found work without sleeping: no wake is needed. Unless another thread of
    /// the consumer's process sleeps on the word (a second receive), which still needs it.
    public func cancelWait() {
        guard agent_load_u32(consumerWaitingWord) != 0, sleepers.load(ordering: .sequentiallyConsistent) == 0 else { return }
        agent_store_u32(consumerWaitingWord, 0)
        // One that went to sleep meanwhile would miss the next publish: it looks again.
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 { agent_futex_wake_shared(consumerWaitingWord) }
    }

    /// `consumerWaiting` for a consumer that sleeps on the word itself: the producer's publish
    /// wakes it with no signal on the side (1 asks the producer for one).
    private static let asleep: UInt32 = 2

    /// Before the consumer sleeps on the ring's word: the next publish (or ``wakeSleeper()``)
    /// wakes it. The consumer then reads the head once more, and sleeps only if it holds
    /// nothing new (its frames may lie beyond a batch it has taken and not released).
    public func announceSleep() {
        agent_store_u32(consumerWaitingWord, Self.asleep)
        agent_fence()
    }

    /// Sleeps after ``announceSleep()`` until a publish, a ``wakeSleeper()`` or the timeout
    /// (negative: none). May return early (a signal): the caller looks again.
    public func sleepUntilPublished(timeoutNanoseconds: Int64) {
        sleepers.add(1, ordering: .sequentiallyConsistent)
        _ = agent_futex_wait_shared(consumerWaitingWord, Self.asleep, timeoutNanoseconds)
        sleepers.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Wakes the consumer if it sleeps on the ring's word: another thread of its process has
    /// something for it (a delivery on the socket, a `wake` frame, a stop). Any thread. A
    /// sleeper is woken even when the word no longer says so: another receive of the process
    /// (a second task receiving, on another thread) may have lowered it, or raised it for a
    /// `wake` frame, while this one slept.
    public func wakeSleeper() {
        // What the caller made ready is visible before the word is read (the sleeper reads in
        // the other order).
        agent_fence()
        let raised = agent_load_u32(consumerWaitingWord) == Self.asleep && agent_exchange_u32(consumerWaitingWord, 0) == Self.asleep
        if raised || sleepers.load(ordering: .sequentiallyConsistent) > 0 { agent_futex_wake_shared(consumerWaitingWord) }
    }
}
