import AgentModuleABI
import Foundation
import Testing
@testable import AgentCore
@testable import AgentRuntime

/// The module's calls, as the stand-in module below records them ("run N", "cancel N").
private let moduleCalls = LockedValue<[String]>([])

/// A cancel of a held run that reaches the worker after the holder took its instant's runs,
/// and before they are handed to the module: the module never saw the run, so the host ends it
/// at the hand-over and the module's `task_cancel` never hears of it (the SDK would keep such a
/// token as "cancelled ahead" for the worker's life). A stand-in module: the test is about the
/// executor, the caller of the module's entry points.
@Suite(.ownThreads) struct HeldRunCancelTests {
    static let entries = TaskEntryPoints(
        create: { _, _, _, _, _, _ in nil },
        run: { _, run in
            moduleCalls.withLock { $0.append("run \(run?.pointee.run_token ?? 0)") }
            return Int32(AGENT_OK)
        },
        cancel: { _, token in moduleCalls.withLock { $0.append("cancel \(token)") } },
        prepared: nil)

    /// The `taskRun` frame's body for `token`, not before `instant`.
    static func runBody(_ token: UInt64, at instant: Int64) -> [UInt8] {
        let buffer = FrameBuffer()
        TaskFrame.appendRun(token: token, attempt: 1, runID: "r\(token)", idempotencyKey: "", notBefore: instant, input: Array("{}".utf8), to: buffer)
        return buffer.withUnsafeBytes { Array($0.dropFirst(FrameCodec.headerLength)) }
    }

    static func cancelBody(_ token: UInt64) -> [UInt8] {
        let buffer = FrameBuffer()
        TaskFrame.append(.taskCancel, token: token, to: buffer)
        return buffer.withUnsafeBytes { Array($0.dropFirst(FrameCodec.headerLength)) }
    }

    @Test func aCancelBetweenTheHoldersTakeAndTheHandOverEndsTheRunWithoutTheModule() throws {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let host = WorkerHost(channel: WorkerChannel(fd: fds[0]))
        let executor = TaskExecutor(host: host, handler: UnsafeMutableRawPointer(bitPattern: 0x10)!, entries: Self.entries)
        var hit: UInt64?
        // The cancel must come in the holder's last stretch (200–500 µs before the instant);
        // on a loaded machine a try can miss it (the holder woke late, or this thread was
        // descheduled past the instant), and is told apart and made again.
        for attempt in 0..<50 where hit == nil {
            let token = UInt64(attempt + 1)
            let instant = TaskExecutor.realtimeNanoseconds() + 40_000_000
            Self.runBody(token, at: instant).withUnsafeBytes { executor.handle(.taskRun, $0) }
            while executor.heldCount > 0, TaskExecutor.realtimeNanoseconds() < instant {}
            let taken = executor.heldCount == 0
            Self.cancelBody(token).withUnsafeBytes { executor.handle(.taskCancel, $0) }
            // Taken by the holder, and cancelled before the instant, when no hand-over is.
            if taken, TaskExecutor.realtimeNanoseconds() < instant { hit = token }
            let deadline = Date().addingTimeInterval(10)
            while host.taskRuns.withLock({ $0[token] != nil }), Date() < deadline {
                // Handed over before the cancel came: the module's cancel ends it, as a module's would.
                if moduleCalls.withLock({ $0.contains("cancel \(token)") }) {
                    _ = host.api.task_complete?(host.api.host_ctx, token, Int32(AGENT_ERROR), nil, 0)
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
            #expect(host.taskRuns.withLock { $0[token] == nil }, "run \(token) never ended")
        }
        let token = try #require(hit, "the cancel never came between the holder's take and the hand-over in 50 tries")
        let calls = moduleCalls.withLock { $0 }
        #expect(!calls.contains("cancel \(token)"), "the module was told to cancel a run it never saw: \(calls)")
        #expect(!calls.contains("run \(token)"), "the cancelled run was started: \(calls)")
        // Its result went to the supervisor, saying why.
        host.channel.flush()
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        let read = recv(fds[1], &bytes, bytes.count, Int32(MSG_DONTWAIT))
        #expect(String(decoding: bytes.prefix(max(read, 0)), as: UTF8.self).contains("cancelled before its start time"))
    }
}
