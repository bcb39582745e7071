import AgentCore
import AgentLoop
import Foundation
import Glibc
import Logging

/// The write half of the data plane: what a worker's queues hold goes into its delivery ring
/// or onto its socket, without blocking. Called once per loop turn for each process that has
/// frames (``EventRouter/flushDirty(_:)``), not per event.
@LoopActor
package struct DeliveryWriter {
    let loop: EventLoop
    let router: EventRouter
    let logger: Logger

    package init(loop: EventLoop, router: EventRouter, logger: Logger) {
        self.loop = loop
        self.router = router
        self.logger = logger
    }

    /// Writes what `process` may have now: the rest of a partly written delivery, then
    /// control frames (start, stop, replies: never behind a backlog of events), then
    /// deliveries: into its ring while there is room (see `copyToRing`), else on the socket
    /// while the delivery window is open, the last one whole. A paused process gets its
    /// socket deliveries regardless of the window: its `taken` frames wait unread behind its
    /// events, and a cycle of blocking subscriptions must still drain.
    /// False when there was nothing to write or no way to (no socket, or a full one).
    /// `kill` ends a worker whose delivery ring is broken.
    package func write(_ process: SupervisedProcess, killing kill: (SupervisedProcess) -> Void) -> Bool {
        guard process.channelFD >= 0, !process.waitingForWritable, process.hasUnsent else { return false }
        let remainder = process.partialFrameRemainder
        if remainder > 0 {
            let written = send(process, process.outgoing, from: process.sent, count: remainder)
            process.noteSent(written)
            guard written == remainder else { return true }
        }
        let control = process.control.count - process.controlSent
        if control > 0 {
            let written = send(process, process.control, from: process.controlSent, count: control)
            process.noteControlSent(written)
            guard written == control else { return true }
        }
        if let ring = process.ring, copyToRing(process, ring, killing: kill) { return true }
        let window = process.pauseCount > 0 ? Int.max : FrameCodec.deliveryWindow
        let allowed = min(process.pendingBytes, max(0, window - process.inFlight))
        guard allowed > 0 else { return true }
        let written = send(process, process.outgoing, from: process.sent, count: allowed)
        process.noteSent(written)
        // A frame cut at the window's edge goes whole: the worker acknowledges whole frames
        // only, and nothing else might come to call this again.
        let rest = process.partialFrameRemainder
        if written == allowed, rest > 0 { process.noteSent(send(process, process.outgoing, from: process.sent, count: rest)) }
        return true
    }

    /// Copies whole delivery frames into the worker's ring while they fit, publishes them and
    /// wakes the worker if it waits; when the ring is full, asks the worker to signal freed
    /// room. False when the rest goes on the socket (the worker takes the ring's frames first,
    /// and nothing more goes into the ring until it took those): a frame too big for the ring,
    /// or everything that does not fit while the process is paused. A paused process's module
    /// may be blocked in `emit` and free no room, while its reader thread still takes what
    /// comes on the socket; held back, a cycle of blocking subscriptions would never resume.
    private func copyToRing(_ process: SupervisedProcess, _ ring: SharedRing, killing kill: (SupervisedProcess) -> Void) -> Bool {
        // On the socket rather than wait, unless a control frame is partly written there.
        var toSocket: Bool { process.pauseCount > 0 && process.control.count == process.controlSent }
        guard process.inFlight == 0 else { return !toSocket }
        while process.pendingBytes > 0 {
            guard let free = ring.freeBytes else {
                logger.error("protocol error: the worker's delivery ring has its tail out of range; killing it", metadata: ["process": "\(process.name)"])
                // Once: the worker is reaped later, and this would run again meanwhile.
                process.ring = nil
                kill(process)
                return true
            }
            var copied = 0
            var next = 0
            process.outgoing.withUnsafeBytes { raw in
                let start = process.sent
                // The queue ends with a whole frame: when it all fits, no need to walk it.
                var end = raw.count - start <= free ? raw.count : start
                while raw.count - end >= 4 {
                    next = 4 + Int(FrameCodec.readUInt32(raw, at: end))
                    guard end - start + next <= free else { break }
                    end += next
                    next = 0
                }
                if end > start { ring.write(UnsafeRawBufferPointer(rebasing: raw[start..<end])) }
                copied = end - start
            }
            if copied > 0 {
                process.noteCopiedToRing(copied)
                if ring.publish() { wake(process) }
            }
            guard next > 0 else { break }
            // On the socket, unless a control frame is still partly written there.
            if next > ring.capacity { return process.control.count > process.controlSent }
            if toSocket { return false }
            // Full: the worker signals freed room, unless some was freed meanwhile.
            if ring.awaitRoom(for: next) { break }
        }
        return true
    }

    /// Tells a worker that waits for deliveries that its ring has some.
    private func wake(_ process: SupervisedProcess) {
        // One unsent wake is enough (a worker that raises its flag and reads nothing must not
        // grow the queue).
        guard !process.wakeUnsent else { return }
        process.wakeUnsent = true
        FrameCodec.append(.wake, body: EmptyCollection(), to: process.control)
        // Not in the middle of a delivery on the socket; write sends it once it can.
        guard process.channelFD >= 0, !process.waitingForWritable, process.partialFrameRemainder == 0 else {
            router.markDirty(process)
            return
        }
        let pending = process.control.count - process.controlSent
        process.noteControlSent(send(process, process.control, from: process.controlSent, count: pending))
    }

    /// Writes `count` bytes of `buffer` from `offset` to the worker without blocking; returns
    /// how many went (fewer once the socket is full: the loop then waits for it to drain).
    private func send(_ process: SupervisedProcess, _ buffer: FrameBuffer, from offset: Int, count: Int) -> Int {
        let fd = process.channelFD
        return buffer.withUnsafeBytes { raw -> Int in
            var written = 0
            while written < count {
                let n = Glibc.send(fd, raw.baseAddress! + offset + written, count - written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                if n > 0 {
                    written += n
                    continue
                }
                if n < 0, errno == EINTR { continue }
                if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    process.waitingForWritable = true
                    updateInterest(process)
                }
                // EPIPE and the like: the worker is dying; its pidfd reports it.
                break
            }
            return written
        }
    }

    /// What the loop watches the worker's socket for: frames unless the process is paused (or,
    /// with an emit ring, unless a marker there announced one), and room to write when a write
    /// found it full.
    package static func interest(of process: SupervisedProcess) -> UInt32 {
        let reads = process.pauseCount == 0 && (process.emitRing == nil || process.awaitingSocketFrames > 0)
        // Not reading, its half close is still watched: a worker that shut its end and ran on
        // showed `running` for ever.
        return (reads ? EventLoop.readable : EventLoop.peerClosed) | (process.waitingForWritable ? EventLoop.writable : 0)
    }

    /// Watches the worker's socket for what ``interest(of:)`` says now.
    package func updateInterest(_ process: SupervisedProcess) {
        guard process.channelFD >= 0, loop.isRegistered(process.channelFD) else { return }
        loop.modify(process.channelFD, events: Self.interest(of: process))
    }
}
