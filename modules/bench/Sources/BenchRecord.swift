import AgentModuleKit
import Glibc

/// A no-op task that leaves a trace of each execution (`"type": "bench.record"`): appends
/// "RUN_ID ATTEMPT\n" to the file named by its input's `log` (one write with O_APPEND, so
/// that lines of workers of several agents never interleave). The fleet's chaos test counts
/// executions this way, outside the database whose records it checks.
struct BenchRecord: TaskHandler {
    struct Input: Decodable, Sendable {
        var log: String
        /// How long each execution takes (ms) before it writes its line: runs in flight.
        var sleep_ms: Int?
    }

    struct Output: Encodable, Sendable {
        var attempt: Int
    }

    struct WriteFailed: Error, CustomStringConvertible {
        var description: String
    }

    static let typeName = "record"
    static let description = "Appends \"RUN_ID ATTEMPT\" to the file named by its input's log; for the fleet's chaos test."
    static var inputSchema: Schema {
        .object(["log": .string(description: "The file each execution appends its line to."),
                 "sleep_ms": .integer(description: "Milliseconds each execution takes before it writes its line.")], required: ["log"])
    }

    init(settings: NoSettings) {}

    func run(input: Input, context: TaskContext) async throws -> Output {
        if let sleep = input.sleep_ms, sleep > 0 { try await Task.sleep(nanoseconds: UInt64(sleep) * 1_000_000) }
        let line = Array("\(context.runID) \(context.attempt)\n".utf8)
        let fd = open(input.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteFailed(description: "cannot open \(input.log): errno \(errno)") }
        defer { close(fd) }
        guard write(fd, line, line.count) == line.count else { throw WriteFailed(description: "cannot write \(input.log): errno \(errno)") }
        return Output(attempt: context.attempt)
    }
}
