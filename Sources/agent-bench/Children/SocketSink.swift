import AgentCore
import BenchSupport
import Foundation
import JSONSchema

/// The receiving end of the socketpair baseline: decodes the same `event` frames a worker
/// sends, checks their sequence numbers and measures their latency exactly as the bench
/// module's sink does, and prints the same JSON result on `bench_end`.
enum SocketSink {
    static func run(fd: Int32) -> Int32 {
        ChildMode.writeLine("ready")
        var tally = BenchTally()
        var decoder = FrameDecoder()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        var finished = false
        while !finished {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            do {
                try decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) { kind, body in
                    guard kind == .event else { return }
                    let received = Clock.realtimeNanoseconds()
                    let event = try EventFrame.parseEmitted(body)
                    if event.type.elementsEqual(BenchPayload.eventType.utf8) {
                        tally.record(sequence: BenchPayload.sequence(in: event.payload), payloadBytes: event.payload.count,
                                     emitted: event.timeNanoseconds, received: received)
                    } else if event.type.elementsEqual(BenchPayload.endType.utf8) {
                        let expected = (try? JSONValue.parse(event.payload))?["count"]?.numberValue?.intValue ?? -1
                        ChildMode.writeLine(tally.report(expected: expected))
                        finished = true
                    }
                }
            } catch {
                ChildMode.writeLine(#"{"error":"\#(error)"}"#)
                return 1
            }
        }
        return finished ? 0 : 1
    }
}
