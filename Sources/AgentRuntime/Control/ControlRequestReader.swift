import AgentBase
import AgentCore
import JSONSchema

/// Reads one control request from the bytes of a connection, as they arrive: a JSON value on
/// one line. Anyone who can open the socket can send anything, so everything here is bounded
/// and every outcome is a value, never a trap.
struct ControlRequestReader {
    /// The longest request line; a client that sends more without a newline is refused.
    static let maximumLength = ControlClient.maximumRequestBytes

    /// What the bytes so far amount to.
    enum Outcome {
        /// No newline yet: read on.
        case incomplete
        /// The request line, without its newline (``request(_:)`` reads it).
        case line([UInt8])
        /// More than ``maximumLength`` bytes came without a newline (`too_large`): answer this.
        case refused(CommandError)
    }

    private var buffer: [UInt8] = []
    /// How far the buffer has been searched for the newline: each chunk's bytes are searched
    /// once (searching the whole buffer at each read held the loop ~20 ms for a 1 MiB request).
    private var searched = 0

    /// Adds what `read` returned and says whether a request is complete.
    mutating func append(_ chunk: some Collection<UInt8>) -> Outcome {
        buffer.append(contentsOf: chunk)
        let found = buffer.firstIndex(of: 10, from: searched)
        searched = buffer.count
        guard let newline = found, newline <= Self.maximumLength else {
            return buffer.count > Self.maximumLength
                ? .refused(CommandError(.tooLarge, "the request is larger than the control socket's limit of \(Self.maximumLength) bytes (1 MiB) without its end of line"))
                : .incomplete
        }
        return .line(Array(buffer[..<newline]))
    }

    /// The request a line holds, or the refusal of a line that is not JSON (`invalid`, with
    /// the pointer of the value at fault).
    static func request(_ line: [UInt8]) -> Result<JSONValue, CommandError> {
        do {
            return .success(try JSONValue.parse(line))
        } catch {
            return .failure(.notJSON(error, in: "the request"))
        }
    }
}
