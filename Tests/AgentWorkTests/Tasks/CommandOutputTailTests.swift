import AgentTestSupport
@testable import AgentWork
import Testing

/// The bounded tail of a command's stderr or stdout (each attempt's record, the run's
/// `stderr_tail`): what an adversarial program writes comes back as bounded, storable text.
@Suite(.ownThreads) struct CommandOutputTailTests {
    static func tail(_ bytes: [UInt8], byteLimit: Int = 1_024, lineLimit: Int = 20) -> String? {
        var tail = CommandOutputTail(byteLimit: byteLimit, lineLimit: lineLimit)
        for start in stride(from: 0, to: bytes.count, by: 4_096) {
            bytes[start..<min(start + 4_096, bytes.count)].withUnsafeBytes { tail.append($0) }
        }
        return tail.text()
    }

    @Test func aLastLineLongerThanTheBoundIsKeptFromWhereTheBoundCutsIt() throws {
        let written = [UInt8](repeating: UInt8(ascii: "x"), count: 100_000) + Array("the end\n".utf8)
        let text = try #require(Self.tail(written))
        #expect(text.hasPrefix("[earlier lines left out]\n"))
        #expect(text.hasSuffix("xxthe end"), "\(text.suffix(40))")
        #expect(text.utf8.count <= 1_024 + 30)
    }

    @Test func nulAndInvalidUTF8ComeBackAsReplacementCharactersNotAsText() throws {
        let written = [UInt8](repeating: 0, count: 50_000) + [0x61, 0, 0x62, 0xFF, 0xFE, 0x1B] + Array("[31mred\n".utf8)
        let text = try #require(Self.tail(written))
        #expect(!text.utf8.contains(0), "no NUL: PostgreSQL refuses it in text")
        #expect(text.hasSuffix("a\u{FFFD}b\u{FFFD}\u{FFFD}\u{1B}[31mred"), "\(text.suffix(20).unicodeScalars.map(\.value))")
    }

    /// Each replacement character is three bytes: a tail of NULs and invalid bytes is held to
    /// its bound as text, not three times it.
    @Test func aTailOfReplacedBytesIsHeldToItsBoundAsText() throws {
        let written = [UInt8](repeating: 0, count: 5_000) + [UInt8](repeating: 0xFF, count: 5_000) + Array("last\n".utf8)
        let text = try #require(Self.tail(written))
        #expect(text.hasPrefix("[earlier lines left out]\n") && text.hasSuffix("\u{FFFD}last"), "\(text.prefix(30))")
        let body = text.utf8.count - "[earlier lines left out]\n".utf8.count
        #expect(body <= 1_024 && body > 1_000, "\(body) bytes")
    }

    @Test func theLastLineOfAnErrorHasNoNULEither() throws {
        var tail = CommandOutputTail(byteLimit: 1_024, lineLimit: 20)
        let written: [UInt8] = Array("first\n".utf8) + [0x6E, 0, 0x6C] + Array("\n  \n".utf8)
        written.withUnsafeBytes { tail.append($0) }
        #expect(tail.lastLine() == "n\u{FFFD}l", "the error message names it, and an error is stored as text")
    }
}
