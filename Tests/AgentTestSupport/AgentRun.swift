import Foundation

/// A real `agent-control console` started on a temporary settings file, with its stdout and
/// stderr collected line by line.
package final class AgentRun: @unchecked Sendable {
    package let directory: String
    package let settingsFile: String
    package let process = TestProcess()
    private let lock = NSLock()
    private var out: [String] = []
    private var err: [String] = []
    private var partial: [Int32: String] = [:]
    /// The streams (1, 2) whose pipe reached its end.
    private var ended: Set<Int32> = []
    /// When the agent was first seen exited (before its pipes were drained).
    package private(set) var exitedAt: Date?

    /// `shell`: a sh snippet run first, in the agent's stead (it then execs the agent, so the
    /// pid is the agent's), e.g. to set a variable from the streams the agent gets.
    package init(settings: String, arguments: [String] = ["--no-build", "--json"], environment: [String: String] = [:],
         directory: String = TestPaths.temporaryDirectory("agent"), shell: String? = nil) throws {
        try TestPaths.requireOutsideSourceTree(directory)
        self.directory = directory
        settingsFile = directory + "/settings.json"
        try settings.write(toFile: settingsFile, atomically: true, encoding: .utf8)
        let agent = TestPaths.products + "/agent-control"
        if let shell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shell + "\nexec \"$0\" \"$@\"", agent, "console", "--settings", settingsFile] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: agent)
            process.arguments = ["console", "--settings", settingsFile] + arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Blocking reads on threads of their own, not `readabilityHandler`: tearing down many
        // dispatch read sources at once crashes libdispatch on Linux (a freed epoll muxnote in
        // _dispatch_event_loop_drain, swift-corelibs-libdispatch#949), which took the whole
        // test process down once here.
        for (pipe, stream) in [(stdout, Int32(1)), (stderr, Int32(2))] {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [weak self] in
                let size = 64 << 10
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
                defer { buffer.deallocate() }
                while true {
                    let count = read(handle.fileDescriptor, buffer, size)
                    if count < 0, errno == EINTR { continue }
                    guard let run = self else { break }
                    run.collect(count > 0 ? Data(bytes: buffer, count: count) : Data(), stream: stream)
                    if count <= 0 { break }
                }
                try? handle.close()
            }
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    private func collect(_ data: Data, stream: Int32) {
        lock.lock()
        defer { lock.unlock() }
        guard !data.isEmpty else {
            // The end of the pipe: everything the agent wrote on this stream has been read.
            ended.insert(stream)
            return
        }
        var text = (partial[stream] ?? "") + String(decoding: data, as: UTF8.self)
        var lines = text.components(separatedBy: "\n")
        text = lines.removeLast()
        partial[stream] = text
        if stream == 1 { out += lines } else { err += lines }
    }

    package var stdoutLines: [String] { lock.withLock { out } }
    package var stderrLines: [String] { lock.withLock { err } }
    package var transcript: String { "--- stdout\n" + stdoutLines.joined(separator: "\n") + "\n--- stderr\n" + stderrLines.joined(separator: "\n") }

    /// Waits until a line of stdout (or stderr) satisfies `predicate`; returns it, or nil after `timeout`.
    @discardableResult
    package func waitForLine(onStderr: Bool = false, timeout: Double = 60, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = (onStderr ? stderrLines : stdoutLines).first(where: predicate) { return line }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    /// Waits until `count` lines satisfy `predicate`.
    package func waitForLines(onStderr: Bool = false, count: Int, timeout: Double = 60, _ predicate: (String) -> Bool) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var found: [String] = []
        while Date() < deadline {
            found = (onStderr ? stderrLines : stdoutLines).filter(predicate)
            if found.count >= count { return found }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return found
    }

    /// JSON lines on stdout, decoded.
    package var jsonLines: [[String: Any]] {
        stdoutLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The worker pids the supervisor reported starting, per process name, in order.
    package func workerPids(_ name: String) -> [Int32] {
        stderrLines.compactMap { line in
            guard line.contains("[\(name)] started worker pid ") else { return nil }
            return line.components(separatedBy: "started worker pid ").last?.split(separator: " ").first.flatMap { Int32($0) }
        }
    }

    /// Sends `signal` and waits for the exit; returns the status, or nil if still running.
    package func stop(signal: Int32 = SIGTERM, timeout: Double = 45) -> Int32? {
        kill(process.processIdentifier, signal)
        let status = waitForExit(timeout: timeout)
        if status == nil { print(Self.stuckReport(process.processIdentifier, "still there 45 s after signal \(signal)")) }
        return status
    }

    /// What the kernel says of a process that did not exit (or answer) when asked: each thread's
    /// state, wait channel and kernel stack (root reads /proc/PID/task/TID/stack), for the test
    /// log; `what` says what it did not do.
    package static func stuckReport(_ pid: Int32, _ what: String) -> String {
        func read(_ path: String) -> String {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "(unreadable)"
        }
        var report = ["process \(pid) \(what): \(read("/proc/\(pid)/stat"))"]
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for tid in threads.sorted() {
            let task = "/proc/\(pid)/task/\(tid)"
            report.append("thread \(tid) \(read(task + "/comm")) state \(read(task + "/stat").split(separator: ")").last?.split(separator: " ").first ?? "?") wchan \(read(task + "/wchan")) children [\(read(task + "/children"))]")
            report.append(read(task + "/stack").split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        }
        return report.joined(separator: "\n")
    }

    package func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        let pid = process.processIdentifier
        var zombie: Int32?
        while process.isRunning, Date() < deadline {
            // Foundation learns of a child's exit from SIGCHLD; once in a full run it did not
            // within 45 s of a SIGKILL. The kernel's word: a zombie has exited (its status read
            // without reaping it, which stays Foundation's to do).
            if let status = Self.exitStatusOfZombie(pid) {
                zombie = status
                break
            }
            // Gone without Foundation hearing of it (reaped by a waitpid of another part of the
            // test process): it has exited, with a status no one can read any more.
            if kill(pid, 0) != 0, errno == ESRCH {
                zombie = -1
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        if zombie != nil {
            let grace = Date().addingTimeInterval(2)
            while process.isRunning, Date() < grace { Thread.sleep(forTimeInterval: 0.02) }
        }
        guard !process.isRunning || zombie != nil else { return nil }
        if exitedAt == nil { exitedAt = Date() }
        // The output is read on other threads: wait for both pipes to reach their end, so that
        // callers see the last lines the agent wrote (a pause in the output is no proof: a
        // loaded machine delays the readers). At most 10 s, in case a leftover child of the
        // agent, or a process another test spawned at the same moment, inherited a pipe.
        let drained = Date().addingTimeInterval(10)
        while Date() < drained, lock.withLock({ ended.count < 2 }) { Thread.sleep(forTimeInterval: 0.02) }
        return process.isRunning ? zombie : process.terminationStatus
    }

    /// As Foundation's `terminationStatus` (the exit code, or the signal), for a child that
    /// has exited and is not reaped yet; nil while it runs (or once reaped). From
    /// /proc/PID/stat: the state (`Z`) and `exit_code`, the 52nd field (waitpid's form).
    package static func exitStatusOfZombie(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // The line ends with a newline: split on it too, or the last field (the exit code)
        // is "0\n", which is no number, and a zombie was never seen (a full run at load 38:
        // a killed curl, a zombie, waited for 120 s).
        let fields = stat[stat.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
        // Fields after the name start at the 3rd (the state); exit_code is the 52nd.
        guard fields.first == "Z", fields.count >= 50, let code = Int32(fields[49]) else { return nil }
        return code & 0x7f == 0 ? (code >> 8) & 0xff : code & 0x7f
    }

    package static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        // A zombie still answers kill(0); it is dead for our purposes.
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
    }
}
