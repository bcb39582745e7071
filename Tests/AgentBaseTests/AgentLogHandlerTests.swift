@testable import AgentBase
import AgentTestSupport
import Foundation
import Logging
import Testing

/// A module's text in the agent's log (its output, its `log` calls) reached the file with its
/// control characters: an escape sequence recoloured or cleared the terminal of whoever read
/// the log with `cat` or `tail -f`, a line break forged a line that looked like the
/// supervisor's own. A process's line is escaped now; the supervisor's own lines are as written.
@Suite(.ownThreads) struct AgentLogHandlerTests {
    static func logged(_ message: String, process: String?) throws -> String {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let handler = AgentLogHandler(label: "test", fd: fds[1])
        let metadata: Logger.Metadata? = process.map { ["process": "\($0)"] }
        handler.log(event: LogEvent(level: .info, message: "\(message)", metadata: metadata, source: "test",
                                    file: #fileID, function: #function, line: #line))
        close(fds[1])
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            all += chunk[0..<n]
        }
        return String(decoding: all, as: UTF8.self)
    }

    @Test func aProcessLineIsWrittenWithItsControlCharactersEscapedOnOneLine() throws {
        let line = try Self.logged("\u{1B}]0;owned\u{07}\u{1B}[2Jdone\n2026-01-01 00:00:00 info forged", process: "din")
        #expect(line.hasSuffix("[din] \\u{1B}]0;owned\\u{7}\\u{1B}[2Jdone\\u{A}2026-01-01 00:00:00 info forged\n"), "\(line.debugDescription)")
        #expect(line.filter { $0 == "\n" }.count == 1 && !line.contains("\u{1B}"))
    }

    @Test func aTabAndTheSupervisorsOwnLinesAreWrittenAsTheyAre() throws {
        let line = try Self.logged("plain text, nothing to escape\tbut a tab", process: "din")
        #expect(line.hasSuffix("[din] plain text, nothing to escape\tbut a tab\n"), "\(line.debugDescription)")
        let own = try Self.logged("settings:\n  a line of a report", process: nil)
        #expect(own.hasSuffix("settings:\n  a line of a report\n"), "\(own.debugDescription)")
    }
}
