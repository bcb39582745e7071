import AgentBase
import AgentCommands
import AgentSupervision
import AgentTestSupport
import Foundation
import Logging
import Testing
@testable import AgentRuntime

/// A front that finishes starting after the supervisor's fronts were closed — its loop ended,
/// as an embedded supervisor's does when its host stops driving it — is stopped, not left
/// listening: the loop that was to take it will never turn again.
@Suite(.ownThreads, .serialized) struct ControlFrontsTests {
    /// A front that listens on a real TCP port of 127.0.0.1, its start held until `gate` opens.
    final class ListeningFront: AgentFront, @unchecked Sendable {
        let gate = DispatchSemaphore(value: 0)
        /// Signalled when `start()` is entered (its thread is then past the fronts' own checks).
        let entered = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var fd: Int32 = -1
        private(set) var port: UInt16 = 0
        /// The listening socket's inode, which names it in /proc/net/tcp.
        private(set) var inode: UInt64 = 0

        func start() throws {
            entered.signal()
            gate.wait()
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && listen(socket, 4) == 0 && getsockname(socket, $0, &length) == 0 }
            }
            guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
            var info = stat()
            fstat(socket, &info)
            lock.withLock {
                fd = socket
                port = UInt16(bigEndian: address.sin_port)
                inode = UInt64(info.st_ino)
            }
        }

        func stop() {
            lock.withLock {
                if fd >= 0 { close(fd) }
                fd = -1
            }
        }

        var listening: Bool { lock.withLock { fd >= 0 } }
        var address: String? { nil }

        /// Whether the kernel still has this front's own socket listening (/proc/net/tcp, by its
        /// inode). Not whether its port answers: once closed, the port may be another's (a test
        /// beside it), or a connect to it may pick it as its own source port and meet itself.
        var socketListens: Bool {
            let table = (try? String(contentsOfFile: "/proc/self/net/tcp", encoding: .utf8)) ?? ""
            let own = String(lock.withLock { inode })
            return table.split(separator: "\n").dropFirst().contains { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                return fields.count > 9 && fields[3] == "0A" && fields[9] == own
            }
        }

        /// Whether a connection to its port is accepted by the kernel (a listening socket).
        var portAnswers: Bool {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
    }

    static func supervisor() -> Supervisor {
        Supervisor.make(configuration: SupervisorConfiguration(workerPath: "/nonexistent/agent-worker", environment: [:]),
                        processes: [], console: ConsoleOutput(json: true, showEvents: false, fd: -1),
                        logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
    }

    /// Waits (no loop turn: the loop has ended) until `condition` holds, up to 30 s.
    static func wait(until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition(), Date() < deadline { usleep(2_000) }
        return condition()
    }

    @Test func aFrontThatStartsAfterTheFrontsClosedIsStopped() {
        let supervisor = Self.supervisor()
        let front = ListeningFront()
        supervisor.inbox.isolated { supervisor.fronts.startBeside([front], inbox: supervisor.inbox, logger: supervisor.logger) {} }
        #expect(front.entered.wait(timeout: .now() + 30) == .success, "the front was never started")
        // The loop ends (its host stops driving it) while the front is still starting.
        supervisor.inbox.isolated { supervisor.fronts.close() }
        front.gate.signal()
        #expect(Self.wait { front.port != 0 && !front.listening }, "the front started after the fronts closed is still listening on port \(front.port)")
        #expect(Self.wait { !front.socketListens }, "its socket (port \(front.port)) still listens")
    }

    @Test func aFrontStartedButNotYetTakenByTheLoopIsStoppedByClose() {
        let supervisor = Self.supervisor()
        let front = ListeningFront()
        supervisor.inbox.isolated { supervisor.fronts.startBeside([front], inbox: supervisor.inbox, logger: supervisor.logger) {} }
        front.gate.signal()
        #expect(Self.wait { front.listening })
        #expect(front.portAnswers && front.socketListens, "the started front does not listen: the test proves nothing")
        // Its thread has handed it to the loop, which never turns again: close() stops it.
        supervisor.inbox.isolated {
            #expect(supervisor.fronts.started.isEmpty)
            supervisor.fronts.close()
        }
        #expect(!front.listening, "close() left a started front listening on port \(front.port)")
        // The kernel's socket outlives the close while a child forked meanwhile by another test
        // of this process still holds a copy, until it execs (CLOEXEC) or exits.
        #expect(Self.wait { !front.socketListens }, "its socket (port \(front.port)) still listens")
    }

    @Test func aFrontIsRefusedOnceTheFrontsClosed() {
        let supervisor = Self.supervisor()
        let front = ListeningFront()
        front.gate.signal()
        supervisor.inbox.isolated {
            supervisor.fronts.close()
            #expect(throws: ControlFronts.ClosedError.self) { try supervisor.fronts.start(front) }
            supervisor.fronts.startBeside([front], inbox: supervisor.inbox, logger: supervisor.logger) {}
            #expect(!supervisor.fronts.starting)
        }
        #expect(front.port == 0 && !front.listening, "a front started after the fronts closed")
    }
}
