import AgentCommands
import Foundation
import JSONSchema

/// MCP's stdio transport: one JSON-RPC message a line on stdin, each answer a line on stdout,
/// until stdin ends. A line longer than ``MCPServer/maximumMessageBytes`` is skipped as it
/// comes (never held whole) and answered with an error; blank lines are ignored.
struct MCPLines {
    let server: MCPServer

    func serve() {
        var line: [UInt8] = []
        var skipping = 0
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            var start = 0
            for index in 0..<n where chunk[index] == 10 {
                take(chunk[start..<index], into: &line, skipping: &skipping)
                if skipping > 0 {
                    write(MCPServer.error(nil, .invalidRequest, "the message is more than \(MCPServer.maximumMessageBytes) bytes (\(skipping + line.count) bytes); it was skipped"))
                } else if line.contains(where: { $0 != 32 && $0 != 9 && $0 != 13 }) {
                    handle(line)
                }
                line.removeAll(keepingCapacity: line.count < 1 << 20)
                skipping = 0
                start = index + 1
            }
            take(chunk[start..<n], into: &line, skipping: &skipping)
        }
        // A last message without its newline.
        if skipping == 0, line.contains(where: { $0 != 32 && $0 != 9 && $0 != 13 }) { handle(line) }
    }

    /// Adds bytes to the line, or counts them once the line is too long.
    private func take(_ bytes: ArraySlice<UInt8>, into line: inout [UInt8], skipping: inout Int) {
        if skipping > 0 || line.count + bytes.count > MCPServer.maximumMessageBytes {
            skipping += line.count + bytes.count
            line.removeAll()
        } else {
            line += bytes
        }
    }

    private func handle(_ line: [UInt8]) {
        let answered = LockedBox<JSONValue?>()
        let done = DispatchSemaphore(value: 0)
        let server = server
        Task {
            answered.set(await server.handle(bytes: line))
            done.signal()
        }
        done.wait()
        if let answer = answered.get() ?? nil { write(answer) }
    }

    private func write(_ answer: JSONValue) {
        FileHandle.standardOutput.write(Data((answer.serialized() + "\n").utf8))
    }
}

/// A value handed from a task to the waiting thread.
private final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value? { lock.withLock { value } }
}
