import CAgentModuleKit
import CAgentSystem
import Foundation

/// The worker's end of the socketpair: a writer thread that batches outgoing frames and a
/// reader thread that decodes incoming ones.
///
/// With an emit ring (see ``attachEmitRing(_:signal:room:)``), outgoing frames go into the ring
/// instead of the socket, by the same two paths: a sparse frame on the emitting thread, a
/// batch of dense ones by the writer thread. A frame too big for the ring goes on the socket,
/// after an ``FrameKind/onSocket`` marker in the ring that keeps its place among the others.
// @unchecked: the emitters' path (every frame a worker sends): its state is guarded by
// `outLock`, waited on by emitters and the writer thread, and `outgoing` is raw memory.
final class WorkerChannel: @unchecked Sendable {
    let fd: Int32
    private let outLock = NSCondition()
    /// Frames not yet sent (or copied into the emit ring).
    private let outgoing = FrameBuffer(capacity: 4096)
    /// Whether the writer thread waits for frames. While it does not, only it touches the emit
    /// ring.
    private var writerIdle = true
    private var closed = false
    /// While set (``holdFrames()``), frames wait in `outgoing`: neither written by their sender
    /// nor handed to the writer.
    private var holding = false
    /// Worker → supervisor frames in shared memory, and the eventfd that tells the supervisor
    /// about them.
    private var emitRing: SharedRing?
    private var emitSignal: Int32 = -1
    /// The eventfd (blocking) on which the supervisor signals freed room in the emit ring.
    private var emitRoom: Int32 = -1
    private var writerStarted = false
    /// Emitters wait above this many queued bytes, so a fast datasource cannot exhaust memory.
    /// The writer sends what it swaps out while the emitter fills the other buffer: at 4 MB
    /// each, the emitter wrote into memory gone cold in its caches (source CPU per 1 KiB event
    /// 0.60 → 0.45 µs with 1 MB; 256 KB made emitters wait and wake too often).
    private let highWater = 1 << 20

    /// `directWriteSpacing`: see ``defaultDirectWriteSpacing`` (tests make every frame close).
    init(fd: Int32, directWriteSpacing: UInt64 = WorkerChannel.defaultDirectWriteSpacing) {
        self.fd = fd
        self.directWriteSpacing = directWriteSpacing
    }

    deinit {
        if emitSignal >= 0 { Glibc.close(emitSignal) }
        if emitRoom >= 0 { Glibc.close(emitRoom) }
    }

    /// When the caller last wrote to the socket or the ring itself after a pause of at least
    /// `directWriteSpacing` (monotonic nanoseconds), and how many it wrote since, closer together.
    private var lastDirectWrite: UInt64 = 0
    private var closeDirectWrites = 0
    /// Frames closer together than this go to the writer thread, which batches them...
    static let defaultDirectWriteSpacing: UInt64 = 20_000
    private let directWriteSpacing: UInt64
    /// ...except, with an emit ring, the first few of a burst. A burst is a datasource that
    /// woke late and catches up; its second event took a hop through the sleeping writer
    /// thread before, a wake-up the first did not pay — also when the supervisor had drained
    /// the first and gone back to sleep between the two (then the copy signals it, one system
    /// call, where waking the writer costs one too and a thread's wake-up besides: about 1 %
    /// of the events of a datasource paced at 10,000/s went that way). A dense stream still
    /// goes to the writer after these few.
    static let closeDirectWriteLimit = 8
    /// How long the writer waits for more frames after a batch before it goes idle (seconds).
    private static let linger = 50e-6

    /// Queues bytes built by `build` (whole frames) for the writer thread, or, when frames are
    /// sparse (or the first few of a burst, see `closeDirectWriteLimit`) and the writer has
    /// nothing to do, writes them on the caller's thread: an event then leaves without waking
    /// the writer (lower latency), while a fast producer still gets its frames batched.
    func send(_ build: (FrameBuffer) -> Void) {
        outLock.lock()
        while outgoing.count > highWater, !closed, !holding { outLock.wait() }
        build(outgoing)
        if writerIdle, !holding {
            let now = DispatchTime.now().uptimeNanoseconds
            var direct = now &- lastDirectWrite > directWriteSpacing
            if direct {
                lastDirectWrite = now
                closeDirectWrites = 0
            } else if closeDirectWrites < Self.closeDirectWriteLimit, emitRing != nil {
                closeDirectWrites += 1
                direct = true
            }
            if !closed, direct {
                let written: Int
                if let ring = emitRing {
                    written = outgoing.withUnsafeBytes { copyFitting($0, into: ring) }
                } else {
                    written = outgoing.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                }
                if written == outgoing.count {
                    outgoing.removeAll(keepingCapacity: true)
                    outLock.unlock()
                    return
                }
                if written > 0 { outgoing.removeFirst(written) }
            }
            outLock.signal()
        }
        outLock.unlock()
    }

    func send(_ kind: FrameKind, body: some Collection<UInt8>) {
        send { FrameCodec.append(kind, body: body, to: $0) }
    }

    /// Keeps the frames sent from now on until ``releaseFrames()`` (a short moment: see
    /// ``CompletionHold``), so that no write wakes the supervisor meanwhile.
    func holdFrames() {
        outLock.lock()
        holding = true
        outLock.unlock()
    }

    /// Sends what was held, in one write when the writer is idle, and lets frames go again.
    func releaseFrames() {
        outLock.lock()
        holding = false
        if !outgoing.isEmpty, !closed {
            if writerIdle {
                let written: Int
                if let ring = emitRing {
                    written = outgoing.withUnsafeBytes { copyFitting($0, into: ring) }
                } else {
                    written = outgoing.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                }
                if written > 0 { outgoing.removeFirst(written) }
            }
            // The rest (or all, the writer being busy) goes by the writer.
            if !outgoing.isEmpty { outLock.signal() }
        }
        // Senders waiting above the high-water mark look again.
        outLock.broadcast()
        outLock.unlock()
    }

    /// From now on, frames go into `ring` (call before the first send). `signal` is the
    /// eventfd on which the supervisor waits for them (the channel keeps its own copy); `room`
    /// the one on which it says that it freed room (the channel takes it).
    func attachEmitRing(_ ring: SharedRing, signal: Int32, room: Int32) {
        outLock.lock()
        emitRing = ring
        emitSignal = fcntl(signal, F_DUPFD_CLOEXEC, 0)
        emitRoom = room
        // For tests of the supervisor's checks: a frame whose length runs past what is published.
        if let value = getenv("AGENT_WORKER_BREAK_EMIT_RING"), String(cString: value) == "1" {
            let broken: [UInt8] = [0xF0, 0xFF, 0xFF, 0x00, FrameKind.event.rawValue]
            _ = broken.withUnsafeBytes { copyFitting($0, into: ring) }
        }
        outLock.unlock()
    }

    /// Copies the whole frames at the start of `frames` that fit into the ring now (none too
    /// big for it), publishes them, and tells the supervisor if it waits for them. Returns the
    /// bytes copied.
    private func copyFitting(_ frames: UnsafeRawBufferPointer, into ring: SharedRing) -> Int {
        let free = Self.freeBytes(of: ring)
        // The whole batch fits: no need to walk it.
        var end = frames.count <= free ? frames.count : 0
        while frames.count - end >= 4 {
            let next = 4 + Int(FrameCodec.readUInt32(frames, at: end))
            guard end + next <= free else { break }
            end += next
        }
        guard end > 0 else { return 0 }
        ring.write(UnsafeRawBufferPointer(rebasing: frames[0..<end]))
        if ring.publish() {
            var one: UInt64 = 1
            _ = Glibc.write(emitSignal, &one, 8)
        }
        return end
    }

    /// The room in the emit ring; a tail out of range (the supervisor broke the protocol) ends
    /// the worker.
    private static func freeBytes(of ring: SharedRing) -> Int {
        guard let free = ring.freeBytes else {
            let message = "agent-worker: the emit ring's tail is out of range\n"
            _ = message.withCString { Glibc.write(2, $0, strlen($0)) }
            // Not exit(): its handler would flush the channel, whose lock may be held here.
            _exit(1)
        }
        return free
    }

    /// Copies a batch into the emit ring (writer thread), waiting for room when it is full; a
    /// frame too big for the ring goes on the socket after a marker. False once the supervisor
    /// is gone.
    private func copyToEmitRing(_ batch: UnsafeRawBufferPointer, _ ring: SharedRing) -> Bool {
        var at = 0
        while at < batch.count {
            at += copyFitting(UnsafeRawBufferPointer(rebasing: batch[at...]), into: ring)
            guard batch.count - at >= 4 else { break }
            let next = 4 + Int(FrameCodec.readUInt32(batch, at: at))
            let tooBig = next > ring.capacity
            let needed = tooBig ? FrameCodec.headerLength : next
            if Self.freeBytes(of: ring) >= needed {
                // Room was freed meanwhile, or the frame is too big for the ring.
                guard tooBig else { continue }
                var marker: [UInt8] = []
                FrameCodec.append(.onSocket, body: EmptyCollection(), to: &marker)
                _ = marker.withUnsafeBytes { copyFitting($0, into: ring) }
                guard Self.writeAll(fd, UnsafeRawBufferPointer(rebasing: batch[at..<(at + next)])) else { return false }
                at += next
                continue
            }
            // Full: the supervisor signals when it freed room (asked before the last look, so
            // that no release can slip in between; a signal left from an earlier wait only
            // makes this look again).
            if ring.awaitRoom(for: needed) {
                var count: UInt64 = 0
                while read(emitRoom, &count, 8) < 0 {
                    guard errno == EINTR else { return false }
                }
            }
        }
        return true
    }

    /// Starts the writer thread (once: two would share the emit ring's head).
    func startWriter() {
        outLock.lock()
        defer { outLock.unlock() }
        guard !writerStarted else { return }
        writerStarted = true
        WorkerThread.start("agent-writer") { [self] in writeLoop() }
    }

    private func writeLoop() {
        let batch = FrameBuffer(capacity: 64 << 10)
        var trimmed = false
        while true {
            outLock.lock()
            var lingered = false
            while outgoing.isEmpty || holding, !closed {
                if !writerIdle {
                    // With a ring, a batch is copied in no time: idle at once, the writer would
                    // be woken again for every few frames of a dense stream. It lingers a
                    // moment instead, while emitters append without waking it.
                    if emitRing != nil, !lingered {
                        lingered = true
                        _ = outLock.wait(until: Date(timeIntervalSinceNow: Self.linger))
                        continue
                    }
                    writerIdle = true
                    // flush() waits for the writer to go idle.
                    outLock.broadcast()
                    if !trimmed {
                        // Idle for the first time, the start's frames sent: the stack pages
                        // they went through are given back (the thread waits near the top).
                        trimmed = true
                        _ = agent_module_kit_trim_stack()
                    }
                }
                outLock.wait()
            }
            writerIdle = false
            if outgoing.isEmpty, closed {
                outLock.unlock()
                return
            }
            batch.swapContents(with: outgoing)
            outLock.broadcast()
            let ring = emitRing
            outLock.unlock()
            let sent = batch.withUnsafeBytes { raw in
                if let ring { copyToEmitRing(raw, ring) } else { Self.writeAll(fd, raw) }
            }
            if !sent {
                // The supervisor is gone: nothing more can be delivered.
                outLock.lock()
                closed = true
                outLock.broadcast()
                outLock.unlock()
                return
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Writes everything queued so far and returns when it is on the socket.
    func flush(timeout: TimeInterval = 2) {
        let deadline = Date().addingSaturated(timeout)
        outLock.lock()
        while (!outgoing.isEmpty || !writerIdle), !closed {
            if !outLock.wait(untilSaturated: deadline) { break }
        }
        outLock.unlock()
    }

    static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < raw.count {
            let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// Reads frames until the supervisor closes the socket; calls `onFrame` for each, and
    /// `afterRead` after the frames of each read.
    func readLoop(_ onFrame: (FrameKind, UnsafeRawBufferPointer) -> Void, afterRead: () -> Void = {}) {
        var decoder = FrameDecoder()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return }
            do {
                try decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), onFrame)
            } catch {
                return
            }
            afterRead()
        }
    }

    /// Reads exactly one frame (blocking); used before the reader thread starts.
    func readOneFrame() -> (FrameKind, [UInt8])? {
        var header = [UInt8](repeating: 0, count: 5)
        guard readExactly(&header) else { return nil }
        let length = header.withUnsafeBytes { Int(FrameCodec.readUInt32($0, at: 0)) }
        guard length >= 1, length <= FrameCodec.maxFrameLength else { return nil }
        var body = [UInt8](repeating: 0, count: length - 1)
        guard readExactly(&body) else { return nil }
        return (FrameKind(rawValue: header[4]), body)
    }

    /// Fds that came with the frames read by ``readOneFrame()`` (those of a ``FrameKind/ring``
    /// frame), oldest first; the caller takes them.
    var receivedFDs: [Int32] = []

    private func readExactly(_ bytes: inout [UInt8]) -> Bool {
        let count = bytes.count
        return bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < count {
                var fds: (Int32, Int32, Int32, Int32) = (-1, -1, -1, -1)
                var received: Int32 = 0
                let n = withUnsafeMutableBytes(of: &fds) {
                    agent_receive_fds(fd, raw.baseAddress! + offset, count - offset, $0.baseAddress!.assumingMemoryBound(to: Int32.self), &received)
                }
                receivedFDs += [fds.0, fds.1, fds.2, fds.3].prefix(Int(received))
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }
}
