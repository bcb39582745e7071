import AgentLoop
import AgentSupervision
import AgentTestSupport
import Foundation
import Logging
import Testing

/// The agent's notifications to systemd outlast a reader that is behind: the notify socket
/// never blocks the loop, so a datagram its full queue refuses is sent again after the next
/// turn, rather than lost (a lost `READY=1` leaves systemd waiting for the start; a lost status
/// stays stale until the next change — seen as a flaky `SystemdNotifyTests` under load, its
/// reader's queue full of watchdog pings).
@Suite(.ownThreads) struct SystemdStatusTests {
    @Test func readyAndTheStatusAFullSocketRefusedAreSentAfterTheNextTurn() throws {
        let socket = try NotifySocket(abstract: true, paused: true)
        defer { socket.stop() }
        let notifier = try SystemdNotifier(socketName: socket.name)
        // The reader is behind: its queue is full of pings (net.unix.max_dgram_qlen of them).
        var pings = 0
        while pings < 100_000, notifier.send(["WATCHDOG=1"]) { pings += 1 }
        try #require(pings < 100_000, "the socket's queue never filled")
        let loop = EventLoop()
        loop.isolated {
            let systemd = SystemdStatus(loop: loop, logger: Logger(label: "test"))
            systemd.notifier = notifier
            systemd.stateChanged()
            // Refused: the queue is full.
            systemd.afterTurn(settled: true, status: "1/1 processes running")
            socket.resume()
            let deadline = Date().addingTimeInterval(30)
            while socket.messages.count < pings, Date() < deadline { usleep(10_000) }
            // The next turn.
            systemd.afterTurn(settled: true, status: "1/1 processes running")
        }
        #expect(socket.waitForMessage { $0.contains("READY=1") && $0.contains("STATUS=1/1 processes running") } != nil,
                "after \(pings) pings: \(socket.messages.suffix(3))")
    }
}
