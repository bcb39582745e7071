import CAgentSystem
import Foundation

/// A worker's host with its threads started before the start frame is known: the writer
/// running, the reader parked until ``releaseReader()``. A warm spare makes it while it waits,
/// so that once adopted it has none of it left to do (starting these threads was half of an
/// adopted spare's start → ready); a worker started otherwise makes it and releases it at once.
struct PreparedHost {
    let host: WorkerHost
    /// Lets the reader go: the host's frames (a task executor's handler must exist first).
    private let gate: DispatchSemaphore

    init(channel: WorkerChannel, ring: RingReceiver?) {
        let host = WorkerHost(channel: channel, ring: ring)
        let gate = DispatchSemaphore(value: 0)
        self.host = host
        self.gate = gate
        channel.startWriter()
        WorkerThread.start("agent-reader") {
            gate.wait()
            channel.readLoop({ kind, body in host.handle(kind, body) }, afterRead: { host.publishDeliveries() })
            host.markChannelClosed()
            // The supervisor is gone: give the process a moment to end, then leave.
            Thread.sleep(forTimeInterval: 2)
            exit(WorkerMain.ExitCode.failure)
        }
    }

    /// Starts reading the channel (once the host is set up for the start frame's process).
    func releaseReader() {
        gate.signal()
    }
}
