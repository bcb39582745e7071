import AgentModuleKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A task handler that misbehaves on purpose, to test executors: each run does what its
/// input's `mode` says.
struct FaultTask: TaskHandler {
    struct Input: Decodable, Sendable {
        var mode: String
        var ms: Int
    }

    struct Output: Encodable, Sendable {
        var mode: String
        var pid: Int32
        var attempt: Int
        var runID: String
        var idempotencyKey: String
        /// 2 MiB of text with `big_output`: more than a run's output may have.
        var padding: String?
    }

    static let typeName = "fault_task"
    static let description = "Misbehaves on purpose per run (ok, fail, crash, hang, sleep, ignore_cancel, heartbeat) to test task executors."
    static var settingsSchema: Schema { .object([:]) }
    static var inputSchema: Schema {
        .object([
            "mode": .string(oneOf: ["ok", "fail", "crash", "hang", "sleep", "ignore_cancel", "big_output", "big_error"], default: "ok",
                            description: "ok: answers at once; fail: throws; crash: kills its worker (SIGSEGV); hang: blocks without heartbeats; sleep: awaits `ms` with heartbeats and progress (cancellable); ignore_cancel: blocks `ms` with heartbeats, ignoring cancellation; big_output: answers with 2 MiB of padding; big_error: throws an error of 100,000 characters."),
            "ms": .integer(minimum: 0, default: 0, description: "Milliseconds for sleep and ignore_cancel."),
        ])
    }
    /// The watchdog for `hang`: runs that send no heartbeat for 1 s are killed.
    static var heartbeatTimeout: Double? { 1 }

    init(settings: NoSettings) {}

    func run(input: Input, context: TaskContext) async throws -> Output {
        switch input.mode {
        case "fail":
            throw FaultTaskError(description: "the fault_task failed on purpose (attempt \(context.attempt))")
        case "big_error":
            throw FaultTaskError(description: "big:" + String(repeating: "e", count: 100_000))
        case "big_output":
            return Output(mode: input.mode, pid: getpid(), attempt: context.attempt, runID: context.runID, idempotencyKey: context.idempotencyKey,
                          padding: String(repeating: "p", count: 2 << 20))
        case "crash":
            raise(SIGSEGV)
        case "hang":
            while true { usleep(100_000) }
        case "sleep":
            let end = Date().addingTimeInterval(Double(input.ms) / 1000)
            context.progress(fraction: 0, message: "sleeping \(input.ms) ms")
            while Date() < end {
                context.heartbeat()
                try await Task.sleep(for: .milliseconds(100))
            }
        case "ignore_cancel":
            let end = Date().addingTimeInterval(Double(input.ms) / 1000)
            while Date() < end {
                context.heartbeat()
                usleep(100_000)
            }
        default:
            break
        }
        return Output(mode: input.mode, pid: getpid(), attempt: context.attempt, runID: context.runID, idempotencyKey: context.idempotencyKey, padding: nil)
    }
}

struct FaultTaskError: Error, CustomStringConvertible {
    let description: String
}
