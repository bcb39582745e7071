import AgentCore
import CAgentSystem
import Foundation

/// Writes lines to a descriptor from a thread of its own, so that a reader that stops reading
/// (a paused pager, a terminal held by Ctrl-S, a stalled journal) never holds the caller — the
/// supervisor's loop, which logs. Up to `limit` bytes wait for the reader (and as much more may
/// be in the thread's hands, being written); a line beyond them is dropped and counted, and a
/// line saying how many goes out where they were. What waits is written at
/// ``finish(until:)``, or before the process exits (at most ``exitWait`` seconds).
public final class DescriptorLineWriter: @unchecked Sendable {
    /// The longest the process's exit waits for a writer's lines.
    public static let exitWait = 2.0
    /// What waits by default: 1 MiB, about 8,000 log lines.
    public static let defaultLimit = 1 << 20

    private let fd: Int32
    private let limit: Int
    private let notice: @Sendable (Int) -> [UInt8]
    private let threadName: String
    // Guards every stored var below; the thread waits on it for lines.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var dropped = 0
    private var writing = false
    /// The lines of the chunk the thread is writing.
    private var writingLines = 0
    private var started = false

    /// `notice`: the line that stands where `n` lines were dropped (with its newline; by
    /// default ``textNotice(_:)``). `threadName`: what `top -H` shows for the thread (at most
    /// 15 bytes).
    public init(fd: Int32, limit: Int = DescriptorLineWriter.defaultLimit, threadName: String = "agent-log",
                notice: @escaping @Sendable (Int) -> [UInt8] = DescriptorLineWriter.textNotice) {
        self.fd = fd
        self.limit = limit
        self.notice = notice
        self.threadName = threadName
        Self.registerForExit(self)
    }

    /// Queues `bytes`, which hold `lines` whole lines (each with its newline); never waits for
    /// the reader. They go or are dropped together.
    public func write(_ bytes: UnsafeRawBufferPointer, lines: Int = 1) {
        condition.lock()
        defer { condition.unlock() }
        // Lines longer than the limit go when nothing waits (or they could never go).
        guard pending.count + bytes.count <= limit || pending.isEmpty && dropped == 0 else {
            dropped += lines
            condition.signal()
            return
        }
        if dropped > 0 {
            pending.append(contentsOf: notice(dropped))
            dropped = 0
        }
        pending.append(contentsOf: bytes)
        // Refused a thread (`ulimit -u`, TasksMax), the lines wait, within the limit, for the
        // next write to ask again.
        if !started { started = SystemThread.start(threadName) { [self] in run() } == 0 }
        condition.signal()
    }

    /// Waits until every queued line is written, at most `timeout` seconds; whether they were.
    @discardableResult
    public func drain(timeout: Double) -> Bool {
        drain(until: Date(timeIntervalSinceNow: timeout))
    }

    /// Whether the thread holds a chunk it is writing (for tests that need it blocked).
    var isWriting: Bool { condition.withLock { writing } }

    private func drain(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !pending.isEmpty || writing || dropped > 0 {
            guard condition.wait(until: deadline) else { return false }
        }
        return true
    }

    /// Drains until `deadline` and leaves the process's exit nothing more to wait for from this
    /// writer: for its owner's end, so that a reader still away costs the exit once, not twice
    /// (the owner of several gives them one deadline). Returns how many lines were left
    /// unwritten, those the thread was writing among them (0: all went).
    @discardableResult
    public func finish(until deadline: Date) -> Int {
        let drained = drain(until: deadline)
        let unwritten = drained ? 0 : condition.withLock { Self.lines(in: pending) + writingLines + dropped }
        Self.writers.withLock { $0.removeAll { $0 === self } }
        return unwritten
    }

    private static func lines(in bytes: [UInt8]) -> Int {
        bytes.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
    }

    private func run() {
        // Foundation's Thread.name names no thread of the kernel's on Linux.
        agent_set_thread_name(threadName)
        condition.lock()
        while true {
            while pending.isEmpty && dropped == 0 { condition.wait() }
            // Every line that waits came before the drops (a line taken after one carries
            // the notice), so the notice goes after them.
            if dropped > 0 {
                pending.append(contentsOf: notice(dropped))
                dropped = 0
            }
            var chunk: [UInt8] = []
            swap(&chunk, &pending)
            writing = true
            writingLines = Self.lines(in: chunk)
            condition.unlock()
            // A reader gone (EPIPE) or a broken descriptor: the chunk is dropped, as a write
            // on the caller's thread would have lost it.
            _ = chunk.withUnsafeBytes { DescriptorWrite.all(fd, $0) }
            condition.lock()
            writing = false
            writingLines = 0
            // Wakes a drain waiting for the end.
            condition.broadcast()
        }
    }

    /// The readable notice: `… 12 line(s) dropped here: the output was not read`.
    @Sendable public static func textNotice(_ dropped: Int) -> [UInt8] {
        Array("\(noticeText(dropped))\n".utf8)
    }

    /// The readable notice's text, without its newline.
    public static func noticeText(_ dropped: Int) -> String {
        "… \(dropped) line(s) dropped here: the output was not read"
    }

    // MARK: The process's exit

    private static let writers = LockedValue<[DescriptorLineWriter]>([])

    /// The process's exit drains the writers (registered once, with the first writer).
    private static let exitHook: Void = { atexit { DescriptorLineWriter.drainAtExit() } }()

    private static func registerForExit(_ writer: DescriptorLineWriter) {
        exitHook
        writers.withLock { $0.append(writer) }
    }

    /// Drains the writers of descriptor `fd` not finished yet (at most ``exitWait`` seconds
    /// each): before a line written to it directly.
    public static func drainAll(fd: Int32) {
        for writer in writers.withLock({ $0 }) where writer.fd == fd { writer.drain(timeout: exitWait) }
    }

    /// Before the process exits: at most ``exitWait`` seconds in all.
    private static func drainAtExit() {
        let deadline = Date(timeIntervalSinceNow: exitWait)
        for writer in writers.withLock({ $0 }) { _ = writer.drain(until: deadline) }
    }
}
