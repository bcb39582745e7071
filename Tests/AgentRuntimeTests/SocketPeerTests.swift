@testable import AgentBase
@testable import AgentLoop
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Synchronization
import Testing
@testable import AgentRuntime

/// The control socket names its peer's user (SO_PEERCRED, then the user database) off the
/// supervisor's loop: a user database that hangs (NSS asking LDAP or sssd) holds that request
/// only — the loop answers other clients meanwhile — and a name found is asked once. A real
/// control socket on a real loop, with a lookup the test holds until it lets it go.
@Suite(.ownThreads, .serialized) struct SocketPeerTests {
    /// A lookup that blocks until ``open()``, counting its calls.
    final class Gate: Sendable {
        let calls = Mutex(0)
        let gate = DispatchSemaphore(value: 0)
        func lookup(_ id: UInt32) -> String? {
            calls.withLock { $0 += 1 }
            // Bounded, so that a failing test does not leave a thread behind for ever.
            _ = gate.wait(timeout: .now() + 300)
            return "ann-from-the-directory"
        }
        func open() { gate.signal() }
        var count: Int { calls.withLock { $0 } }
    }

    /// A line read by a client thread.
    final class Answer: Sendable {
        let line = Mutex<String?>(nil)
        var value: String? { line.withLock { $0 } }
        /// Connects, sends `request` and reads the answer's line on a thread of its own.
        static func ask(_ path: String, _ request: String) -> Answer {
            let answer = Answer()
            Thread.detachNewThread {
                guard let client = RawControlClient(path: path) else { return answer.line.withLock { $0 = "no connection" } }
                client.send(request)
                let line = client.readLine(timeout: 300) ?? "no answer"
                answer.line.withLock { $0 = line }
            }
            return answer
        }
    }

    /// A control server on `loop` answering each request with the peer it was given.
    @LoopActor static func server(_ loop: EventLoop, _ directory: String, peers: SocketPeer) throws -> ControlServer {
        let paths = AgentPaths(agentDirectory: directory, runDirectory: directory + "/run")
        try FileManager.default.createDirectory(atPath: paths.runDirectory, withIntermediateDirectories: true)
        return try ControlServer(paths: paths, loop: loop, logger: Logger(label: "test"), peers: peers) { _, peer, _, respond in
            respond(["ok": true, "peer": peer.map(JSONValue.string) ?? .null])
        }
    }

    /// Turns the loop until `condition` holds (at most 120 s).
    static func turn(_ loop: EventLoop, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(120)
        while !condition(), Date() < deadline { loop.runOnce(maxWait: 0.01) }
        return condition()
    }

    @Test func aSlowUserDatabaseHoldsItsRequestOnlyAndANameIsAskedOnce() throws {
        let directory = TestPaths.temporaryDirectory("socket-peer")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = EventLoop()
        let gate = Gate()
        let server = try loop.isolated { try Self.server(loop, directory, peers: SocketPeer(loop: loop, waitLimit: 600, lookup: gate.lookup)) }
        defer { loop.isolated { server.close() } }
        let path = loop.isolated { server.paths.socketPath }

        let first = Answer.ask(path, #"{"command": "status"}"#)
        #expect(Self.turn(loop) { gate.count == 1 }, "the lookup never started")
        // The lookup hangs (the gate is shut): the loop answers another client meanwhile.
        let other = Answer.ask(path, "not json")
        #expect(Self.turn(loop) { other.value != nil })
        #expect(other.value?.contains(#""ok":false"#) == true, "\(other.value ?? "")")
        #expect(first.value == nil && gate.count == 1, "\(first.value ?? "")")

        gate.open()
        #expect(Self.turn(loop) { first.value != nil })
        #expect(first.value?.contains(#""peer":"ann-from-the-directory""#) == true, "\(first.value ?? "")")
        // Known now: answered without asking the database again.
        let again = Answer.ask(path, #"{"command": "status"}"#)
        #expect(Self.turn(loop) { again.value != nil })
        #expect(again.value?.contains(#""peer":"ann-from-the-directory""#) == true, "\(again.value ?? "")")
        #expect(gate.count == 1)
    }

    @Test func aUserDatabaseThatDoesNotAnswerLetsTheRequestGoOnUnderTheID() throws {
        let directory = TestPaths.temporaryDirectory("socket-peer-hung")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = EventLoop()
        let gate = Gate()
        defer { gate.open() }
        let server = try loop.isolated { try Self.server(loop, directory, peers: SocketPeer(loop: loop, waitLimit: 0.2, lookup: gate.lookup)) }
        defer { loop.isolated { server.close() } }
        let path = loop.isolated { server.paths.socketPath }
        let first = Answer.ask(path, #"{"command": "status"}"#)
        #expect(Self.turn(loop) { first.value != nil })
        #expect(first.value?.contains(#""peer":"\#(getuid())""#) == true, "\(first.value ?? "")")
        // While the lookup still hangs, the next request does not queue a second one.
        let second = Answer.ask(path, #"{"command": "status"}"#)
        #expect(Self.turn(loop) { second.value != nil })
        #expect(second.value?.contains(#""peer":"\#(getuid())""#) == true, "\(second.value ?? "")")
        #expect(gate.count == 1)
    }
}
