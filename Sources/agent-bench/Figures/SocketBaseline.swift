import AgentCore
import BenchSupport
import CAgentSystem
import Foundation

/// The baseline of figure 4: the same `event` frames, stamped and paced the same way, sent by
/// the bench over a bare socketpair to a second process (`agent-bench --child socket-sink`)
/// that decodes and checks them as the sink does. One hop, no supervisor, no SDK.
enum SocketBaseline {
    static func run(_ environment: BenchEnvironment, count: Int, payloadBytes: Int, rate: Double) throws -> RoutingResult {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BenchError("socketpair: \(String(cString: strerror(errno)))")
        }
        let child: ChildRunner.Child
        do {
            child = try ChildRunner.start(environment, ["socket-sink"], channel: fds[1])
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
        defer { close(fds[0]) }
        guard child.readLine(timeout: 10) == "ready" else {
            child.finish()
            throw BenchError("the socketpair receiver did not start")
        }
        let writer = FrameWriter(fd: fds[0])
        var payload = BenchPayload.template(size: payloadBytes)
        let type = Array(BenchPayload.eventType.utf8)
        let start = Clock.monotonicNanoseconds()
        let interval = rate > 0 ? 1e9 / rate : 0
        for sequence in 0..<count {
            if interval > 0 {
                let due = start + Int64(Double(sequence) * interval)
                if Clock.monotonicNanoseconds() < due { Clock.sleep(untilMonotonic: due) }
            }
            BenchPayload.setSequence(sequence, in: &payload)
            try writer.append(type: type, payload: payload, flush: interval > 0)
        }
        try writer.append(type: Array(BenchPayload.endType.utf8), payload: Array(#"{"count":\#(count)}"#.utf8), flush: true)
        let line = child.readLine(timeout: 60)
        let status = child.finish()
        guard let line, status == 0, let result = RoutingResult(json: line) else {
            throw BenchError("the socketpair receiver failed (status \(status)): \(line ?? "no result")")
        }
        return result
    }
}

/// Builds event frames and writes them in batches of up to 64 KiB, like a worker's writer
/// thread under load (or one write per frame when paced).
struct FrameWriter {
    let fd: Int32
    private let buffer = FrameBuffer(capacity: 80 << 10)

    init(fd: Int32) { self.fd = fd }

    func append(type: [UInt8], payload: [UInt8], flush: Bool) throws {
        // The host's stamp, as a worker's emit takes it.
        let time = agent_event_time_ns()
        type.withUnsafeBytes { t in
            payload.withUnsafeBytes { p in
                EventFrame.appendEmitted(type: t, timeNanoseconds: time, payload: p, to: buffer)
            }
        }
        if flush || buffer.count >= 64 << 10 { try write() }
    }

    private func write() throws {
        try buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw BenchError("send: \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
