@testable import AgentBase
import AgentModuleABI
import AgentTestSupport
import Foundation
import Testing
@testable import AgentCore

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

    /// An executor of the stand-in module over one end of a socketpair (the other end reads
    /// what it sends); the caller closes both.
    static func executor() throws -> (WorkerHost, TaskExecutor, [Int32]) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let host = WorkerHost(channel: WorkerChannel(fd: fds[0]))
        return (host, TaskExecutor(host: host, handler: UnsafeMutableRawPointer(bitPattern: 0x10)!, entries: entries), fds)
    }

    @Test func aCancelBetweenTheHoldersTakeAndTheHandOverEndsTheRunWithoutTheModule() throws {
        let (host, executor, fds) = try Self.executor()
        defer { close(fds[0]); close(fds[1]) }
        // The cancel comes as the holder is about to hand the instant's runs over (it took
        // them from its queue in its last stretch): the race, made certain.
        executor.beforeHandOver = { [unowned executor] runs in
            for run in runs { Self.cancelBody(run.token).withUnsafeBytes { executor.handle(.taskCancel, $0) } }
        }
        let token: UInt64 = 7
        Self.runBody(token, at: TaskExecutor.realtimeNanoseconds() + 50_000_000).withUnsafeBytes { executor.handle(.taskRun, $0) }
        let deadline = Date().addingTimeInterval(30)
        while host.taskRuns.withLock({ $0[token] != nil }), Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        #expect(host.taskRuns.withLock { $0[token] == nil }, "the run never ended")
        let calls = moduleCalls.withLock { $0 }
        #expect(!calls.contains("cancel \(token)"), "the module was told to cancel a run it never saw: \(calls)")
        #expect(!calls.contains("run \(token)"), "the cancelled run was started: \(calls)")
        // Its result goes to the supervisor, saying why: sent just after the run is taken off
        // the table (task_complete), so read until it has come.
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let sent = Date().addingTimeInterval(30)
        while !String(decoding: received, as: UTF8.self).contains("cancelled before its start time"), Date() < sent {
            host.channel.flush()
            let read = recv(fds[1], &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if read > 0 { received += chunk.prefix(read) } else { Thread.sleep(forTimeInterval: 0.001) }
        }
        #expect(String(decoding: received, as: UTF8.self).contains("cancelled before its start time"))
    }

    /// A cancel of a run the module has (handed over before the cancel) reaches the module's
    /// `task_cancel`, which ends it.
    @Test func aCancelAfterTheHandOverReachesTheModule() throws {
        let (host, executor, fds) = try Self.executor()
        defer { close(fds[0]); close(fds[1]) }
        let token: UInt64 = 8
        Self.runBody(token, at: TaskExecutor.realtimeNanoseconds() + 50_000_000).withUnsafeBytes { executor.handle(.taskRun, $0) }
        let deadline = Date().addingTimeInterval(30)
        while !moduleCalls.withLock({ $0.contains("run \(token)") }), Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        Self.cancelBody(token).withUnsafeBytes { executor.handle(.taskCancel, $0) }
        #expect(moduleCalls.withLock { $0.contains("cancel \(token)") }, "\(moduleCalls.withLock { $0 })")
        #expect(host.taskRuns.withLock { $0[token] } == true, "marked cancelled, going until the module completes it")
    }
}
