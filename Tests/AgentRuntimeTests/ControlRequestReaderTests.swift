import AgentTestSupport
import Testing
@testable import AgentRuntime

/// Reading a control request from a connection's bytes, as they arrive in pieces.
@Suite(.ownThreads) struct ControlRequestReaderTests {
    @Test func requestSplitAcrossReadsIsDecodedAtItsNewline() throws {
        var reader = ControlRequestReader()
        guard case .incomplete = reader.append(Array(#"{"command":"#.utf8)) else { Issue.record("complete too early"); return }
        guard case .request(let request) = reader.append(Array("\"status\"}\n{\"command\":\"stop\"}\n".utf8)) else {
            Issue.record("no request at the newline")
            return
        }
        #expect(request["command"]?.stringValue == "status")
    }

    @Test func lineThatIsNotJSONIsAnsweredWithTheParseError() {
        var reader = ControlRequestReader()
        guard case .invalid(let message) = reader.append(Array("{\"command\": \n".utf8)) else {
            Issue.record("not reported as invalid")
            return
        }
        #expect(message.hasPrefix("the request is not valid JSON: line 1"), "\(message)")
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
        guard case .tooLong = outcome else {
            Issue.record("\(total) bytes without a newline were not refused")
            return
        }
        #expect(total > ControlRequestReader.maximumLength)
    }
}
