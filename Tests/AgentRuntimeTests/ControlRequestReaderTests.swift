import AgentBase
import AgentTestSupport
import Testing
@testable import AgentRuntime

/// Reading a control request from a connection's bytes, as they arrive in pieces.
@Suite(.ownThreads) struct ControlRequestReaderTests {
    @Test func requestSplitAcrossReadsIsDecodedAtItsNewline() throws {
        var reader = ControlRequestReader()
        guard case .incomplete = reader.append(Array(#"{"command":"#.utf8)) else { Issue.record("complete too early"); return }
        guard case .line(let line) = reader.append(Array("\"status\"}\n{\"command\":\"stop\"}\n".utf8)) else {
            Issue.record("no request at the newline")
            return
        }
        #expect(try ControlRequestReader.request(line).get()["command"]?.stringValue == "status")
    }

    /// Each chunk is searched once for the newline: a request in many small chunks is found
    /// at its end, whatever came before.
    @Test func aLongRequestInSmallChunksIsFoundAtItsNewline() throws {
        var reader = ControlRequestReader()
        let text = Array(#"{"command":"status","pad":""#.utf8) + [UInt8](repeating: 0x61, count: 200_000) + Array("\"}\n".utf8)
        var outcome = ControlRequestReader.Outcome.incomplete
        var offset = 0
        while case .incomplete = outcome, offset < text.count {
            outcome = reader.append(text[offset..<min(offset + 4096, text.count)])
            offset += 4096
        }
        guard case .line(let line) = outcome else {
            Issue.record("no request at the newline")
            return
        }
        #expect(line.count == text.count - 1)
        #expect(try ControlRequestReader.request(line).get()["pad"]?.stringValue?.count == 200_000)
    }

    @Test func lineThatIsNotJSONIsAnsweredWithTheParseError() {
        var reader = ControlRequestReader()
        guard case .line(let line) = reader.append(Array("{\"command\": \n".utf8)),
              case .failure(let refusal) = ControlRequestReader.request(line) else {
            Issue.record("not reported as invalid")
            return
        }
        // `invalid` as HTTP says it (it used to come without a code), with the pointer.
        #expect(refusal.code == .invalid)
        #expect(refusal.message.hasPrefix("the request is not valid JSON at line 1, column"), "\(refusal.message)")
        #expect(refusal.pointer == "/command")
    }

    @Test func repeatedKeyIsRefusedAtItsMember() {
        var reader = ControlRequestReader()
        guard case .line(let line) = reader.append(Array(#"{"command":"status","command":"stop"}"#.utf8) + [10]),
              case .failure(let refusal) = ControlRequestReader.request(line) else {
            Issue.record("a repeated \"command\" was read as a request")
            return
        }
        #expect(refusal.code == .invalid)
        #expect(refusal.pointer == "/command")
        #expect(refusal.message.contains("the key \"command\" appears twice"), "\(refusal.message)")
    }

    @Test func moreThanTheLimitWithoutANewlineIsTooLong() {
        var reader = ControlRequestReader()
        let chunk = [UInt8](repeating: 0x20, count: 64 << 10)
        var outcome = ControlRequestReader.Outcome.incomplete
        var total = 0
        while case .incomplete = outcome, total <= ControlRequestReader.maximumLength {
            outcome = reader.append(chunk)
            total += chunk.count
        }
        guard case .refused(let refusal) = outcome, refusal.code == .tooLarge else {
            Issue.record("\(total) bytes without a newline were not refused")
            return
        }
        #expect(total > ControlRequestReader.maximumLength)
    }
}
