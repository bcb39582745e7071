@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing

/// `agent-control hash-password` on a terminal (a pseudo-terminal made by `script`): asks
/// twice, shows nothing of what is typed.
@Suite(.ownThreads) struct HashPasswordTerminalTests {
    static let script = FileManager.default.isExecutableFile(atPath: "/usr/bin/script") ? "/usr/bin/script" : nil

    /// Runs hash-password on a pseudo-terminal, typing each line once its prompt shows.
    static func typing(_ lines: [String]) throws -> (status: Int32, output: String) {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: script!)
        process.arguments = ["-qec", TestPaths.products + "/agent-control hash-password", "/dev/null"]
        process.currentDirectoryURL = URL(fileURLWithPath: TestPaths.temporaryDirectory("hash-tty"))
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // A prompt that never comes holds the reads below: killed after 2 minutes, saying so.
        let deadline = ProcessDeadline.kill(process, after: 120, "hash-password on a terminal")
        defer { deadline.cancel() }
        var seen = ""
        let reader = output.fileHandleForReading
        for (prompt, line) in zip(["Password: ", "Again: "], lines) {
            let deadline = Date().addingTimeInterval(60)
            while !seen.contains(prompt), Date() < deadline {
                let data = reader.availableData
                if data.isEmpty { break }
                seen += String(decoding: data, as: UTF8.self)
            }
            try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        }
        try input.fileHandleForWriting.close()
        seen += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        return (ProcessDeadline.waitForExit(process, within: 60, "hash-password on a terminal") ?? -1, seen)
    }

    @Test(.enabled(if: script != nil, "script (util-linux) is not installed: no pseudo-terminal to test with"))
    func onATerminalThePasswordIsAskedTwiceWithoutEcho() throws {
        let same = try Self.typing(["terminal-secret", "terminal-secret"])
        #expect(same.status == 0, "\(same.output)")
        #expect(!same.output.contains("terminal-secret"), "the password was echoed: \(same.output)")
        let hash = same.output.components(separatedBy: .whitespacesAndNewlines).first { $0.hasPrefix("$2b$12$") }
        #expect(hash.map(HTTPSettings.isBcryptHash) == true, "\(same.output)")
        let differ = try Self.typing(["terminal-secret", "terminal-secreT"])
        #expect(differ.status == 1 && differ.output.contains("the two passwords differ"), "\(differ.output)")
        #expect(!differ.output.contains("$2b$"))
    }
}
