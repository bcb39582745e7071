import AgentCore
import CAgentSystem
import Foundation

/// A worker's shared rings, made by the supervisor and handed to the worker in a `ring` frame,
/// first on its socket: the delivery ring (the supervisor produces), the emit ring (the worker
/// produces), an eventfd on which the worker signals (freed room in the delivery ring, frames in
/// the emit ring) and one on which the supervisor says it freed room in the emit ring.
///
/// A warm spare gets its rings when it is made (``SparePool``): it maps them while it waits,
/// so that adopting it costs the start frame alone, no memfd, mapping or eventfd on the
/// restart's path.
package struct WorkerRings {
    package let delivery: SharedRing
    package let emit: SharedRing
    /// The eventfd the worker signals on (the supervisor's loop watches it).
    package let signalFD: Int32
    /// The eventfd on which the supervisor tells a waiting worker that it freed emit room.
    package let roomFD: Int32

    /// Makes the rings and sends them, in a `ring` frame with their fds, on `channelFD` (a new,
    /// empty socket: the frame's 21 bytes go at once).
    package static func make(sendingOn channelFD: Int32) throws -> WorkerRings {
        let (delivery, memfd) = try SharedRing.create()
        defer { Glibc.close(memfd) }
        let (emit, emitFD) = try SharedRing.create(capacity: SharedRing.emitCapacity)
        defer { Glibc.close(emitFD) }
        let signal = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard signal >= 0 else { throw SharedRing.Failure(description: "eventfd: \(String(cString: strerror(errno)))") }
        // Blocking: the worker's writer sleeps in read() on it. The supervisor's writes never
        // block (an eventfd's counter does not fill up).
        let room = eventfd(0, Int32(EFD_CLOEXEC))
        guard room >= 0 else {
            let code = errno
            Glibc.close(signal)
            throw SharedRing.Failure(description: "eventfd: \(String(cString: strerror(code)))")
        }
        var frame: [UInt8] = []
        let body = [UInt64(delivery.capacity), UInt64(emit.capacity)].flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } }
        FrameCodec.append(.ring, body: body, to: &frame)
        let fds = [memfd, signal, emitFD, room]
        guard agent_send_fds(channelFD, frame, frame.count, fds, 4) == 0 else {
            let code = errno
            Glibc.close(signal)
            Glibc.close(room)
            throw SharedRing.Failure(description: "sendmsg: \(String(cString: strerror(code)))")
        }
        // Waiting from the start: the worker's first frame signals.
        _ = emit.prepareToWait()
        return WorkerRings(delivery: delivery, emit: emit, signalFD: signal, roomFD: room)
    }

    /// Closes the eventfds of rings never installed (a spare that died or was dropped); the
    /// rings are unmapped with their last reference.
    package func close() {
        Glibc.close(signalFD)
        Glibc.close(roomFD)
    }
}
