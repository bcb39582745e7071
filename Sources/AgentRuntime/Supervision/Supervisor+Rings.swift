import AgentCore
import CAgentSystem
import Foundation
import Logging

extension Supervisor {
    /// Gives a new worker its delivery ring: a `ring` frame, first on its socket, with the
    /// ring's memfd and an eventfd on which the worker signals freed room. Without a ring
    /// (memfd, mmap or eventfd failing) deliveries go on the socket, as they would to an older
    /// worker; `AGENT_SHARED_RINGS=0` asks for that.
    func attachRing(to process: SupervisedProcess) {
        guard configuration.sharedRings else { return }
        do {
            let (ring, memfd) = try SharedRing.create()
            defer { close(memfd) }
            let signal = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
            guard signal >= 0 else { throw SharedRing.Failure(description: "eventfd: \(String(cString: strerror(errno)))") }
            var frame: [UInt8] = []
            FrameCodec.append(.ring, body: withUnsafeBytes(of: UInt64(ring.capacity).littleEndian) { Array($0) }, to: &frame)
            let fds = [memfd, signal]
            // The socket is new and empty: 13 bytes go at once.
            guard agent_send_fds(process.channelFD, frame, frame.count, fds, 2) == 0 else {
                let code = errno
                close(signal)
                throw SharedRing.Failure(description: "sendmsg: \(String(cString: strerror(code)))")
            }
            process.ring = ring
            process.roomSignalFD = signal
            loop.register(signal) { [unowned self, unowned process] _ in
                var count: UInt64 = 0
                _ = read(process.roomSignalFD, &count, 8)
                markDirty(process)
            }
        } catch {
            logger.warning("no delivery ring (\(error)); deliveries go on the socket", metadata: ["process": "\(process.name)"])
        }
    }

    /// Lets go of a dead worker's ring (events still in it are lost with the worker).
    func detachRing(from process: SupervisedProcess) {
        if process.roomSignalFD >= 0 {
            loop.unregister(process.roomSignalFD)
            close(process.roomSignalFD)
        }
        process.roomSignalFD = -1
        process.ring = nil
    }
}
