@testable import AgentBase
@testable import AgentLoop
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Synchronization
import Testing
@testable import AgentRuntime

/// An answer of 64 KiB or more is made into text off the loop: a client still taking the
/// partial lines before it (a chat's, to a slow reader) gets every one, then the answer — the
/// connection is not closed once the partial lines are out while the answer is being made.
/// The answer's job waits behind one the test holds, so the gap is certain.
@Suite(.ownThreads, .serialized) struct ControlLongAnswerTests {
    @Test func aSlowReaderGetsEveryPartialLineThenALongAnswer() throws {
        let directory = TestPaths.temporaryDirectory("long-answer")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = EventLoop()
        let answered = Mutex(false)
        let pieces = 240, piece = String(repeating: "p", count: 1000)
        let long = String(repeating: "a", count: 100_000)
        let server = try loop.isolated {
            let paths = AgentPaths(agentDirectory: directory, runDirectory: directory + "/run")
            try FileManager.default.createDirectory(atPath: paths.runDirectory, withIntermediateDirectories: true)
            return try ControlServer(paths: paths, loop: loop, logger: Logger(label: "test")) { _, _, partial, respond in
                // More than the socket's buffer: the rest waits for the client to read.
                for index in 0..<pieces { partial(["partial": .string("\(index) \(piece)")]) }
                respond(["ok": true, "long": .string(long)])
                answered.withLock { $0 = true }
            }
        }
        defer { loop.isolated { server.close() } }
        let path = loop.isolated { server.paths.socketPath }
        let held = DispatchSemaphore(value: 0)
        ControlServer.checks.submit { _ = held.wait(timeout: .now() + 120) }

        // The client sends, then takes nothing until the handler has answered; then it takes
        // what comes while the answer's text waits behind the held job.
        let go = DispatchSemaphore(value: 0)
        let lines = Mutex<[String]>([])
        let newlines = Mutex(0)
        let ended = Mutex(false)
        let reader = Thread {
            defer { ended.withLock { $0 = true } }
            guard let client = RawControlClient(path: path) else { return }
            client.send(#"{"command": "status"}"#)
            guard go.wait(timeout: .now() + 120) == .success else { return }
            var received: [UInt8] = []
            client.readAll(timeout: 120) { chunk in
                received.append(contentsOf: chunk)
                newlines.withLock { $0 += chunk.count { $0 == 10 } }
                return false
            }
            lines.withLock { $0 = String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init) }
        }
        reader.start()
        #expect(SocketPeerTests.turn(loop) { answered.withLock { $0 } }, "the handler never answered")
        go.signal()
        #expect(SocketPeerTests.turn(loop) { newlines.withLock { $0 } >= pieces || ended.withLock { $0 } }, "the partial lines did not come")
        held.signal()
        #expect(SocketPeerTests.turn(loop) { ended.withLock { $0 } }, "the connection did not end")
        let got = lines.withLock { $0 }
        #expect(got.count == pieces + 1, "\(got.count) lines")
        #expect(got.last.map { $0.contains(#""ok":true"#) && $0.count > 100_000 } == true, "the answer's line is missing: \(got.last?.prefix(80) ?? "")")
    }
}
