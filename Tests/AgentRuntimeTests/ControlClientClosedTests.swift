@testable import AgentBase
import AgentTestSupport
import CAgentSystem
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// An agent killed while it answered: the client said "the agent's answer is not valid JSON:
/// … expected a JSON value, found end of input", which told nothing, and a script that retried
/// it queued the run again. It says what happened now.
@Suite(.ownThreads) struct ControlClientClosedTests {
    /// A control socket listened on by the test itself, in a run directory of its own.
    struct Listening {
        let directory: String
        let paths: AgentPaths
        let directoryFD: Int32
        let listener: Int32

        init(_ name: String) throws {
            directory = TestPaths.temporaryDirectory(name)
            paths = AgentPaths(agentDirectory: directory, runDirectory: directory + "/run")
            try FileManager.default.createDirectory(atPath: paths.runDirectory, withIntermediateDirectories: true)
            directoryFD = agent_open_directory(paths.runDirectory)
            try #require(directoryFD >= 0)
            listener = agent_unix_socket(directoryFD, paths.socketName, 1)
            try #require(listener >= 0)
        }

        func close() {
            Glibc.close(listener)
            Glibc.close(directoryFD)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func aConnectionClosedWithoutAnAnswerIsSaidSo() throws {
        let socket = try Listening("control-closed")
        defer { socket.close() }
        let (paths, listener) = (socket.paths, socket.listener)
        // A server that reads the request's line and hangs up, as a killed agent's socket does.
        Thread.detachNewThread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var byte: UInt8 = 0
            while read(connection, &byte, 1) == 1, byte != 10 {}
            close(connection)
        }
        let error = #expect(throws: ControlError.self) { _ = try ControlClient.send(["command": "status"], paths: paths, timeout: 120) }
        #expect(error?.description.contains("the agent closed the connection without answering") == true, "\(String(describing: error))")
        #expect(error?.description.contains("not valid JSON") == false)
    }

    /// Partial lines, then an answer of several MB written in pieces (as a socket gives them):
    /// each line whole, the answer whole. The newline was searched for from the start of what
    /// was read at every piece: a 13 MB answer took the client 28 s of CPU.
    @Test func partialLinesThenAnAnswerOfMegabytesInPiecesComeWhole() throws {
        let socket = try Listening("control-pieces")
        defer { socket.close() }
        let (paths, listener) = (socket.paths, socket.listener)
        let long = String(repeating: "x", count: 4 << 20)
        let lines = Array((#"{"partial": "one"}"# + "\n" + #"{"partial": "two"}"# + "\n" + #"{"ok": true, "long": ""#).utf8) + Array(long.utf8) + Array("\"}\n".utf8)
        Thread.detachNewThread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var byte: UInt8 = 0
            while read(connection, &byte, 1) == 1, byte != 10 {}
            // Pieces of 1,000 bytes, so that a line is read in many.
            for start in stride(from: 0, to: lines.count, by: 1_000) {
                let end = min(start + 1_000, lines.count)
                guard lines[start..<end].withUnsafeBytes({ write(connection, $0.baseAddress, $0.count) }) == end - start else { return }
            }
        }
        var partials: [JSONValue] = []
        let answer = try ControlClient.send(["command": "status"], paths: paths, timeout: 120) { partials.append($0) }
        #expect(partials == [["partial": "one"], ["partial": "two"]])
        #expect(answer["ok"] == true && answer["long"]?.stringValue?.count == long.count)
    }
}
