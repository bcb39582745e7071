import AgentTestSupport
@testable import AgentWork
import JSONSchema
import Testing

/// A command's stdout kept up to its bound: what is whole and what is cut.
@Suite(.ownThreads) struct CommandStdoutTests {
    static func captured(_ parts: [[UInt8]], limit: Int) -> CommandStdout {
        var stdout = CommandStdout(limit: limit)
        for part in parts { part.withUnsafeBytes { stdout.append($0) } }
        return stdout
    }

    /// JSON that fills the bound exactly, then its newlines (as `print` ends a line), is whole.
    @Test func jsonFillingTheBoundThenLineEndsIsWholeJSON() {
        let json = Array(#"{"a":"\#(String(repeating: "x", count: 1000))"}"#.utf8)
        let stdout = Self.captured([json, Array("\n".utf8), Array("\r\n\n".utf8)], limit: json.count)
        #expect(!stdout.isTruncated)
        #expect(stdout.output()?["a"]?.stringValue?.count == 1000)
    }

    @Test func anythingButLineEndsPastTheBoundCutsTheOutput() {
        let json = Array(#"{"a":1}"#.utf8)
        let stdout = Self.captured([json, Array("\n".utf8), Array("\n ".utf8), Array("\n".utf8)], limit: json.count)
        #expect(stdout.isTruncated)
        let text = stdout.output()?.stringValue ?? ""
        #expect(text.hasPrefix(#"{"a":1}"#) && text.contains("[output truncated: the first 7 bytes of 11 bytes kept]"), "\(text)")
    }

    /// Bytes that are no text come back as U+FFFD, three bytes each: the output's text is held
    /// to the bound too, cut between characters, saying so; NUL is no text either.
    @Test func anOutputOfReplacedBytesIsHeldToTheBoundAsText() throws {
        let stdout = Self.captured([[UInt8](repeating: 0xFF, count: 2_000), [UInt8](repeating: 0, count: 2_000)], limit: 1_000)
        let text = try #require(stdout.output()?.stringValue)
        let kept = try #require(text.split(separator: "\n").first)
        #expect(kept.utf8.count <= 1_000 && kept.utf8.count > 990 && kept.allSatisfy { $0 == "\u{FFFD}" }, "\(kept.utf8.count)")
        #expect(text.contains("[output truncated: the first 1000 bytes of 4000 bytes kept, and of their text the first 999 bytes"), "\(text.suffix(100))")

        let within = Self.captured([Array("a".utf8), [0xFF, 0, 0xE2, 0x82], Array("b".utf8)], limit: 1_000)
        #expect(within.output() == "a\u{FFFD}\u{FFFD}\u{FFFD}b", "\(String(describing: within.output()))")

        let grown = Self.captured([Array("ok ".utf8) + [UInt8](repeating: 0xFF, count: 500)], limit: 1_000)
        let cut = try #require(grown.output()?.stringValue)
        #expect(cut.hasPrefix("ok \u{FFFD}") && cut.contains("its bytes made more than 1000 bytes of text"), "\(cut.suffix(160))")
        let body = try #require(cut.split(separator: "\n").first)
        #expect(body.utf8.count <= 1_000 && body.utf8.count >= 998, "cut between characters: \(body.utf8.count)")
    }

    @Test func textFillingTheBoundThenLineEndsIsWholeWithoutThem() {
        let stdout = Self.captured([Array("done".utf8), Array("\n\n".utf8)], limit: 4)
        #expect(stdout.output() == "done")
    }
}
