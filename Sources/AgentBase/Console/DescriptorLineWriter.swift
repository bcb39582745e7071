import Foundation

/// Writes lines to a descriptor from a thread of its own, so that a reader that stops reading
/// (a paused pager, a terminal held by Ctrl-S, a stalled journal) never holds the caller — the
/// supervisor's loop, which logs. Up to `limit` bytes wait for the reader; a line beyond them
/// is dropped and counted, and a line saying how many goes out before the next one that fits.
/// What waits is written before the process exits (at most ``exitWait`` seconds), or at
/// ``drain(timeout:)``.
public final class DescriptorLineWriter: @unchecked Sendable {
    /// The longest the process's exit waits for a writer's lines.
    public static let exitWait = 2.0
    /// What waits by default: 1 MiB, about 8,000 log lines.
    public static let defaultLimit = 1 << 20

    private let fd: Int32
    private let limit: Int
    // Guards every stored var below; the thread waits on it for lines.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var dropped = 0
    private var writing = false
    private var started = false

    public init(fd: Int32, limit: Int = DescriptorLineWriter.defaultLimit) {
        self.fd = fd
        self.limit = limit
        Self.registerForExit(self)
    }

    /// Queues `line` (with its newline); never waits for the reader.
    public func write(_ line: UnsafeRawBufferPointer) {
        condition.lock()
        defer { condition.unlock() }
        guard pending.count + line.count <= limit else {
            dropped += 1
            return
        }
        if dropped > 0 {
            pending.append(contentsOf: "… \(dropped) line(s) dropped here: the output was not read\n".utf8)
            dropped = 0
        }
        pending.append(contentsOf: line)
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "agent-log-writer"
            thread.start()
        }
        condition.signal()
    }

    /// Waits until every queued line is written, at most `timeout` seconds; whether they were.
    @discardableResult
    public func drain(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !pending.isEmpty || writing {
            guard condition.wait(until: deadline) else { return false }
        }
        return true
    }

    private func run() {
        condition.lock()
        while true {
            while pending.isEmpty { condition.wait() }
            var chunk: [UInt8] = []
            swap(&chunk, &pending)
            writing = true
            condition.unlock()
            writeAll(chunk)
            condition.lock()
            writing = false
            // Wakes a drain waiting for the end.
            condition.broadcast()
        }
    }

    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return  // The reader is gone (EPIPE) or the descriptor broken: nothing to do.
                }
                offset += n
            }
        }
    }

    // MARK: The process's exit

    private static let writers = LockedValue<[DescriptorLineWriter]>([])

    private static func registerForExit(_ writer: DescriptorLineWriter) {
        let first = writers.withLock { all -> Bool in
            all.append(writer)
            return all.count == 1
        }
        if first { atexit { DescriptorLineWriter.drainAll() } }
    }

    private static func drainAll() {
        for writer in writers.withLock({ $0 }) { writer.drain(timeout: exitWait) }
    }
}
