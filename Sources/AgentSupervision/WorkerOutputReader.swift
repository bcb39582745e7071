import AgentCore
import AgentLoop
import Foundation
import Logging

/// Reads what workers write on their stdout and stderr pipes, line by line: each line goes to
/// the log (tagged with the process and the stream) and to the process's own log
/// (`agent-control logs`). Lines longer than 64 KiB are cut, their length kept. The agent's log
/// takes a burst of ``logBurst`` bytes of a process's output (its `log` calls and messages
/// counted too, see ``admitsToLog(_:bytes:)``), then ``logBytesPerSecond``: one module flooding
/// its stderr rotated 60 MB of log in 0.2 s, pushing every line of the supervisor's own out of
/// it. Lines left out are counted there; the process's log has its output's lines.
@LoopActor
package final class WorkerOutputReader {
    private let loop: EventLoop
    private let processLog: ProcessLog
    private let logger: Logger
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)
    /// What each process may still write into the agent's log, by process name.
    private var allowances: [String: RateAllowance] = [:]
    /// When each process's lines left out were last said (monotonic seconds).
    private var leftOutSaid: [String: Double] = [:]
    package static let logBurst = Double(4 << 20)
    package static let logBytesPerSecond = Double(64 << 10)

    package init(loop: EventLoop, processLog: ProcessLog, logger: Logger) {
        self.loop = loop
        self.processLog = processLog
        self.logger = logger
    }

    /// Reads what the worker wrote on one of its pipes, at most `budget` bytes (then the loop
    /// turns and comes back: a worker that floods its output cannot starve routing).
    package func read(_ process: SupervisedProcess, _ index: Int, budget: Int = 64 << 10) {
        let fd = process.outputs[index].fd
        guard fd >= 0 else { return }
        var left = budget
        while left > 0 {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min(left, $0.count)) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 {
                if n == 0 { loop.unregister(fd) }
                return
            }
            left -= n
            buffer.withUnsafeBytes { all in split(UnsafeRawBufferPointer(rebasing: all[0..<n]), of: process, index) }
        }
    }

    /// Ends the pipe's last line, if it has one (at the worker's exit).
    package func flushLine(_ process: SupervisedProcess, _ index: Int) {
        guard !process.outputs[index].line.isEmpty else { return }
        let line = String(decoding: process.outputs[index].line, as: UTF8.self)
        let length = process.outputs[index].length
        process.outputs[index].line.removeAll(keepingCapacity: true)
        process.outputs[index].length = 0
        processLog.append(process.name, process.outputs[index].stream, line, length: length)
        guard admitsToLog(process.name, bytes: line.utf8.count) else { return }
        logger.info("\(line)", metadata: ["process": "\(process.name)", "stream": "output"])
    }

    /// Whether a line of `bytes` from the process named `name` may go into the agent's log: its
    /// output, its `log` calls and its messages share one allowance (a module calling `log` or
    /// `send_message` in a loop filled the log and its rotations in 10–20 s). The lines left
    /// out are counted in the next line let through.
    package func admitsToLog(_ name: String, bytes: Int) -> Bool {
        let now = EventLoop.now()
        var allowance = allowances[name] ?? RateAllowance(burst: Self.logBurst, perSecond: Self.logBytesPerSecond, now: now)
        // A line costs its bytes and a little more (so that empty lines count too).
        let kept = allowance.take(Double(bytes + 64), now: now)
        // Said at most once a second: one line let through in ten at the steady rate said it.
        let due = now - (leftOutSaid[name] ?? -.infinity) >= 1
        let leftOut = kept && due ? allowance.takeLeftOut() : 0
        if leftOut > 0 { leftOutSaid[name] = now }
        allowances[name] = allowance
        if leftOut > 0 {
            logger.warning("\(leftOut) line\(leftOut == 1 ? "" : "s") of output, log calls and messages of \(name) left out of this log (more than \(Int(Self.logBytesPerSecond) >> 10) KiB a second after a burst of \(Int(Self.logBurst) >> 20) MiB); `agent-control logs \(name)` keeps its newest output lines")
        }
        return kept
    }

    private func split(_ bytes: UnsafeRawBufferPointer, of process: SupervisedProcess, _ index: Int) {
        var start = 0
        while start < bytes.count {
            let newline = bytes[start...].firstIndex(of: 10)
            let end = newline ?? bytes.count
            process.outputs[index].length += end - start
            let room = (64 << 10) - process.outputs[index].line.count
            if room > 0 { process.outputs[index].line.append(contentsOf: bytes[start..<min(end, start + room)]) }
            guard newline != nil else { break }
            flushLine(process, index)
            start = end + 1
        }
    }
}
