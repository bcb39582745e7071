@testable import AgentWork
import JSONSchema
import Testing

/// A command's stdout kept up to its bound: what is whole and what is cut.
@Suite struct CommandStdoutTests {
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

    @Test func textFillingTheBoundThenLineEndsIsWholeWithoutThem() {
        let stdout = Self.captured([Array("done".utf8), Array("\n\n".utf8)], limit: 4)
        #expect(stdout.output() == "done")
    }
}
