@testable import AgentLoop
@testable import AgentSupervision
import Foundation
import Glibc
import Logging
import Testing

/// A flood of SIGHUP made 57,000 reloads in 4 s, whose log lines filled every rotated log:
/// SIGHUPs are passed on once a second at most, those in between as one more. The signal pipe
/// is written by the test (as the handlers write it), so nothing is sent to the test process.
@Suite(.ownThreads) struct SignalWatchTests {
    @Test func aFloodOfHangupsMakesOneReloadNowAndOneAfter() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        defer { close(fds[1]) }
        let loop = EventLoop()
        loop.isolated {
            let watch = SignalWatch(loop: loop, logger: Logger(label: "test"))
            watch.signalFD = fds[0]
            var got: [Int32] = []
            #expect(watch.watch([SIGHUP, SIGTERM]) { got.append($0) } == nil)
            var bytes = [UInt8](repeating: UInt8(SIGHUP), count: 100)
            bytes.append(UInt8(SIGTERM))
            #expect(write(fds[1], &bytes, bytes.count) == bytes.count)
            let deadline = EventLoop.now() + 30
            while got.count < 3, EventLoop.now() < deadline { loop.runOnce(maxWait: 0.05) }
            // The first at once, SIGTERM as it came, the 99 others as one, a second after the first.
            #expect(got == [SIGHUP, SIGTERM, SIGHUP])
            for _ in 0..<5 { loop.runOnce(maxWait: 0.01) }
            #expect(got.count == 3)
        }
    }
}
