import JSONSchema

/// What a command wrote on stdout, kept up to a bound: the run's output.
///
/// Beyond the bound the pipe is still read (a writer blocked on a full pipe would hang the
/// run) and what comes is counted, not kept; the output then says how much was left out.
package struct CommandStdout: Sendable {
    package let limit: Int
    package private(set) var bytes: [UInt8] = []
    /// Everything written, kept or not.
    package private(set) var total = 0
    /// Whether all that was past the bound was line ends (a MiB of JSON and its newline is
    /// whole), until something else came.
    private var onlyLineEndsPast = true

    package init(limit: Int) {
        self.limit = limit
    }

    package var isTruncated: Bool { total > bytes.count && !onlyLineEndsPast }

    package mutating func append(_ chunk: UnsafeRawBufferPointer) {
        total += chunk.count
        let room = max(limit - bytes.count, 0)
        if room > 0 { bytes.append(contentsOf: chunk.prefix(room)) }
        if onlyLineEndsPast, chunk.count > room {
            onlyLineEndsPast = !chunk.dropFirst(room).contains { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        }
    }

    /// The output: JSON when all of it parses as JSON (and nests at most
    /// ``InputNesting/deepest`` levels), else the text without its trailing
    /// newlines (as a shell's `$(…)` gives it); nil when nothing was written. Output cut at the
    /// bound is text that ends saying so.
    package func output() -> JSONValue? {
        if bytes.isEmpty { return nil }
        // JSON nested too deeply for a run's record is kept as the text it was.
        if !isTruncated, let json = try? JSONValue.parse(bytes), InputNesting.pathBeyond(json, limit: InputNesting.deepest) == nil { return json }
        // NUL is no text (as in the tails): U+FFFD, as invalid UTF-8 is.
        var text = bytes.contains(0) ? String(decoding: CommandOutputTail.replacingNUL(bytes[...]), as: UTF8.self) : String(decoding: bytes, as: UTF8.self)
        // Each replacement character is three bytes: the text is held to the bound too (2 MB of
        // 0xFF kept 1 MiB of bytes, 3 MiB of text).
        let grown = text.utf8.count > limit
        if grown { text = String(decoding: Self.wholeCharacters(text.utf8.prefix(limit)), as: UTF8.self) }
        if isTruncated {
            return .string(text + "\n[output truncated: the first \(CommandStdout.describe(bytes.count)) of \(CommandStdout.describe(total)) kept\(grown ? ", and of their text the first \(CommandStdout.describe(text.utf8.count)) (NUL and invalid UTF-8 are U+FFFD, three bytes each)" : "")]")
        }
        if grown {
            return .string(text + "\n[output truncated: its bytes made more than \(CommandStdout.describe(limit)) of text (NUL and invalid UTF-8 are U+FFFD, three bytes each); the first \(CommandStdout.describe(text.utf8.count)) kept]")
        }
        while text.hasSuffix("\n") || text.hasSuffix("\r\n") { text.removeLast() }
        return .string(text)
    }

    /// `bytes` of UTF-8 without a character cut at its end.
    static func wholeCharacters(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var end = bytes.endIndex
        // Back over continuation bytes to the lead byte of the last character, then see whether it is whole.
        var index = end
        var continuation = 0
        while index > bytes.startIndex {
            let before = bytes.index(before: index)
            if bytes[before] & 0xC0 == 0x80, continuation < 3 {
                continuation += 1
                index = before
                continue
            }
            let lead = bytes[before]
            let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            if length != continuation + 1 { end = before }
            break
        }
        return bytes[bytes.startIndex..<end]
    }

    package static func describe(_ count: Int) -> String {
        if count >= 1 << 20, count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
        if count >= 1 << 10, count % (1 << 10) == 0 { return "\(count >> 10) KiB" }
        return "\(count) bytes"
    }
}

/// The end of what a command wrote on stderr (or stdout): the last `byteLimit` bytes and at
/// most `lineLimit` lines, for the run's and the attempt's record and the failure notification.
package struct CommandOutputTail: Sendable {
    package let byteLimit: Int
    package let lineLimit: Int
    private var bytes: [UInt8] = []
    private var dropped = 0

    package init(byteLimit: Int, lineLimit: Int) {
        self.byteLimit = byteLimit
        self.lineLimit = lineLimit
    }

    /// Bytes held (at most twice the bound).
    package var heldBytes: Int { bytes.count }

    package mutating func append(_ chunk: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: chunk.suffix(byteLimit))
        dropped += max(0, chunk.count - byteLimit)
        // Trimmed in halves: each byte is moved at most once or twice.
        if bytes.count > 2 * byteLimit {
            let excess = bytes.count - byteLimit
            bytes.removeFirst(excess)
            dropped += excess
        }
    }

    /// The tail as text (nil when nothing was written): whole lines, saying when earlier ones
    /// were left out.
    package func text() -> String? {
        var kept = bytes.suffix(byteLimit)
        var cut = dropped > 0 || bytes.count > byteLimit
        if cut, let newline = kept.firstIndex(of: UInt8(ascii: "\n")), newline + 1 < kept.endIndex {
            // A line cut in its middle is left out whole — unless it is the only one (a last
            // line longer than the bound is kept from where the bound cuts it).
            kept = kept[(newline + 1)...]
        }
        // NUL is no text (PostgreSQL refuses it in a text column): shown as U+FFFD, as invalid
        // UTF-8 is (replaced in the bytes: a String's replacement of 64 Ki of them takes 50 ms).
        let decoded = kept.contains(0) ? String(decoding: Self.replacingNUL(kept), as: UTF8.self) : String(decoding: kept, as: UTF8.self)
        var lines = decoded.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        if lines.count > lineLimit {
            lines.removeFirst(lines.count - lineLimit)
            cut = true
        }
        if lines.isEmpty && !cut { return nil }
        var body = lines.joined(separator: "\n")
        // A replacement character (NUL, invalid UTF-8) is three bytes: held to the bound as text too.
        if body.utf8.count > byteLimit {
            let end = body.utf8.suffix(byteLimit)
            body = String(decoding: end.drop { $0 & 0xC0 == 0x80 }, as: UTF8.self)
            cut = true
        }
        return cut ? "[earlier lines left out]\n" + body : body
    }

    static func replacingNUL(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var replaced: [UInt8] = []
        replaced.reserveCapacity(bytes.count + 64)
        for byte in bytes {
            if byte == 0 { replaced.append(contentsOf: [0xEF, 0xBF, 0xBD]) } else { replaced.append(byte) }
        }
        return replaced
    }

    /// The last line that is not blank, for an error message.
    package func lastLine() -> String? {
        let end = bytes.suffix(4096)
        let text = end.contains(0) ? String(decoding: Self.replacingNUL(end), as: UTF8.self) : String(decoding: end, as: UTF8.self)
        return text.split(separator: "\n").last { !$0.allSatisfy(\.isWhitespace) }
            .map { String($0.prefix(300)) }
    }
}

/// What a command's pipes gave, to be made into its outcome's texts: on the loop when small,
/// on a thread of its own when large (a MiB of JSON to parse or of text to escape takes tens
/// of milliseconds, which the loop would answer nothing else in).
package struct CommandCaptures: Sendable {
    package var stdout: CommandStdout
    package var stderr: CommandOutputTail
    package var stdoutTail: CommandOutputTail

    /// The outcome's parts made of them.
    package struct Texts: Sendable {
        /// ``CommandStdout/output()``.
        package var output: JSONValue?
        /// The tails' ``CommandOutputTail/text()``.
        package var stderrTail: String?
        package var stdoutTail: String?
        /// ``CommandOutputTail/lastLine()`` of stderr, for the error.
        package var stderrLastLine: String?
    }

    /// From this many bytes held the texts are made off the loop.
    package static let madeAsideFrom = 64 << 10

    /// Whether the texts are made off the loop (``madeAsideFrom`` bytes held or more).
    package var isLarge: Bool { stdout.bytes.count + stderr.heldBytes + stdoutTail.heldBytes >= Self.madeAsideFrom }

    /// The outcome's texts (tens of milliseconds for a MiB of JSON: off the loop when large).
    package func texts() -> Texts {
        Texts(output: stdout.output(), stderrTail: stderr.text(), stdoutTail: stdoutTail.text(), stderrLastLine: stderr.lastLine())
    }
}
