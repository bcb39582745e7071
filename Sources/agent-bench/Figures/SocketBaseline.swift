import AgentCore
import BenchSupport
import CAgentSystem
import Foundation

/// The baseline of figure 4: the same `event` frames, stamped and paced the same way, sent by
/// the bench over a bare socketpair to a second process (`agent-bench --child socket-sink`)
/// that decodes and checks them as the sink does. One hop, no supervisor, no SDK; or two, through
/// a relay that only copies.
enum SocketBaseline {
    /// `relay`: the frames go through a third process (`agent-bench --child socket-relay`)
    /// that copies them from one socketpair to another unparsed — two hops, as through the
    /// supervisor, with nothing done at the middle one.
    static func run(_ environment: BenchEnvironment, count: Int, payloadBytes: Int, rate: Double, relay: Bool = false) throws -> RoutingResult {
        let started = try startReceiver(environment, relay: relay)
        let receiver = started.receiver
        var sender: Int32? = started.sender
        // Closing the sender ends the relay's input, and with it the relay.
        func finishSending() -> Int32 {
            if let fd = sender { close(fd) }
            sender = nil
            return started.relay?.finish() ?? 0
        }
        guard receiver.readLine(timeout: 10) == "ready" else {
            _ = finishSending()
            kill(receiver.pid, SIGKILL)
            receiver.finish()
            throw BenchError("the socketpair receiver did not start")
        }
        do {
            try send(count: count, payloadBytes: payloadBytes, rate: rate, to: started.sender)
        } catch {
            _ = finishSending()
            receiver.finish()
            throw error
        }
        let line = receiver.readLine(timeout: 60)
        let status = receiver.finish()
        let relayStatus = finishSending()
        guard let line, status == 0, relayStatus == 0, let result = RoutingResult(json: line) else {
            throw BenchError("the socketpair receiver failed (status \(status), relay \(relayStatus)): \(line ?? "no result")")
        }
        return result
    }

    /// The `bench` frames, paced at `rate` (0: as fast as the socket takes them), then `bench_end`.
    private static func send(count: Int, payloadBytes: Int, rate: Double, to fd: Int32) throws {
        let writer = FrameWriter(fd: fd)
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
    }

    /// Starts the receiver (and the relay before it): the bench writes to `sender`.
    private static func startReceiver(_ environment: BenchEnvironment, relay: Bool) throws
        -> (sender: Int32, receiver: ChildRunner.Child, relay: ChildRunner.Child?) {
        let toReceiver = try socketPair()
        let receiver: ChildRunner.Child
        do {
            receiver = try ChildRunner.start(environment, ["socket-sink"], channel: toReceiver.1)
        } catch {
            close(toReceiver.0); close(toReceiver.1)
            throw error
        }
        close(toReceiver.1)
        guard relay else { return (toReceiver.0, receiver, nil) }
        defer { close(toReceiver.0) }
        let toRelay: (Int32, Int32)
        let relayChild: ChildRunner.Child
        do {
            toRelay = try socketPair()
            do {
                relayChild = try ChildRunner.start(environment, ["socket-relay"], channel: toRelay.1, stdin: toReceiver.0)
            } catch {
                close(toRelay.0); close(toRelay.1)
                throw error
            }
        } catch {
            kill(receiver.pid, SIGKILL)
            receiver.finish()
            throw error
        }
        close(toRelay.1)
        return (toRelay.0, receiver, relayChild)
    }

    private static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BenchError("socketpair: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
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
