import Foundation
import Glibc

/// A program adapter's program: started, read, written, and started again when it ends or
/// stops answering — within the chatbot's worker, which goes on answering with the others
/// meanwhile (a program that exited stayed gone, and the chatbot silently answered without it).
extension ProgramChatAdapter {
    /// Waits, at most until `deadline`, for the programs starting to say ready, side by side
    /// (one after another, each within its own 30 s, two slow ones kept the chatbot from
    /// starting at all). Those still starting then go on starting while the chatbot answers.
    static func awaitReady(_ programs: [ProgramChatAdapter], until deadline: Double) {
        while true {
            let starting = programs.filter(\.isStarting)
            let remaining = deadline - now()
            guard !starting.isEmpty, remaining > 0 else { return }
            var descriptors = starting.flatMap(\.pollDescriptors)
            _ = poll(&descriptors, nfds_t(descriptors.count), Saturating.pollTimeout(remaining))
            for program in starting { program.service() }
        }
    }

    var isStarting: Bool {
        if case .starting = phase { return true }
        return false
    }

    /// Everything that needs no waiting: a start that is due, a start given up, what waits
    /// for the program's stdin, what it wrote (side notes handled, answers taken), and the
    /// complaints due a log line.
    func service() {
        let now = Self.now()
        switch phase {
        case .down(let until):
            if now >= until { launch() }
            return
        default:
            break
        }
        flush()
        readOutput()
        // After the read: a `ready` that came in time but was read late counts.
        if case .starting(let until) = phase, now >= until {
            programEnded(because: "did not say {\"ready\": true} within \(Int(Self.readyTimeout)) s", killing: true)
        }
        reportComplaints(now: now)
    }

    /// Writes what waits for the program, as far as it reads.
    func flush() {
        guard let child, outbox.flush(to: child.input) == .closed else { return }
        programEnded(because: "closed its stdin")
    }

    /// Starts the program and gives it its `start` frame; nil, or why it could not start.
    @discardableResult
    func launch() -> String? {
        let started: ProgramChild
        do {
            // In a group of its own: killed with what it started when it is started again.
            started = try ProgramChild.start(command: command, directory: directory, ownGroup: true)
        } catch {
            pause(after: "could not start: \(error)")
            return "\(error)"
        }
        _ = fcntl(started.input, F_SETFL, fcntl(started.input, F_GETFL) | O_NONBLOCK)
        child = started
        reader = JSONLinesReader(fd: started.output, limit: ProgramBridge.lineLimit)
        outbox.reset()
        outstanding = []
        asking = nil
        outbox.send(startLine)
        phase = .starting(until: Self.now() + Self.readyTimeout)
        flush()
        return nil
    }

    /// The program has ended, or is made to: it is reaped, and started again after a pause.
    func programEnded(because reason: String, killing: Bool = false) {
        guard let child else { return }
        Glibc.close(child.input)
        Glibc.close(child.output)
        reader?.deallocate()
        reader = nil
        self.child = nil
        asking = nil
        if killing { Glibc.kill(child.pid, SIGKILL) }
        let ended = Self.reap(child.pid)
        // What it started and left running dies with it (one `sleep` was left per restart).
        Glibc.kill(-child.pid, SIGKILL)
        pause(after: reason + ended)
    }

    /// Down until the next start: a second after the first end, doubling up to a minute.
    private func pause(after reason: String) {
        failures += 1
        let seconds = min(60, 1 << min(failures - 1, 6))
        phase = .down(until: Self.now() + Double(seconds))
        if firstStartMade { log("adapter \(name): its program \(reason); starting it again in \(seconds) s") }
    }

    /// How the program ended (` (exit status 3)`), after a moment for it to end by itself
    /// (its stdout closed, it may still be on its way out); then it is killed.
    private static func reap(_ pid: pid_t) -> String {
        var status: Int32 = 0
        var ended = waitpid(pid, &status, WNOHANG)
        for _ in 0..<20 where ended == 0 {
            usleep(5_000)
            ended = waitpid(pid, &status, WNOHANG)
        }
        if ended == 0 {
            Glibc.kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            return " (killed: it went on after closing its output)"
        }
        guard ended == pid else { return "" }
        return status & 0x7F == 0 ? " (exit status \((status >> 8) & 0xFF))" : " (killed by signal \(status & 0x7F))"
    }

    /// Reads what the program wrote, without waiting: side notes go where they go, the rest is
    /// taken (``take(_:)``). A megabyte at a time at most, so that a program writing flat out
    /// cannot keep the chatbot reading.
    private func readOutput() {
        for _ in 0..<16 {
            guard let child, reader != nil else { return }
            var readable = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            guard poll(&readable, 1, 0) > 0 else { return }
            var frames: [JSONLinesFrame] = []
            var problems: [String] = []
            let open = reader!.read { item in
                guard case .line(let bytes) = item else {
                    return problems.append("a line over \(ProgramBridge.lineLimit) bytes")
                }
                guard !bytes.isEmpty else { return }
                do throws(JSONLinesError) {
                    frames.append(try JSONLinesFrame(line: bytes))
                } catch {
                    problems.append("\(error)")
                }
            }
            refusedCount += problems.count
            if firstRefusal == nil { firstRefusal = problems.first }
            for frame in frames { handle(frame) }
            guard open else { return programEnded(because: "ended") }
        }
    }

    private func handle(_ frame: JSONLinesFrame) {
        switch frame {
        case .message(let message): host.sendText(.message, level: message.level.number, message.text)
        case .alert(let text): host.sendText(.message, level: JSONLinesFrame.Message.Level.warning.number, text)
        case .emit(let emit): host.emitJSON(emit.type, emit.payload)
        case .heartbeat, .state: break
        default: take(frame)
        }
    }

    /// What the program did wrong since the last report, in a line each at most once a second:
    /// a program that writes refused lines flat out must not fill the log.
    private func reportComplaints(now: Double) {
        guard unasked > 0 || refusedCount > 0 || outbox.dropped > 0, complaints.take(now: now) else { return }
        if unasked > 0 {
            log("adapter \(name): dropped \(unasked) answer(s) no message asked for")
            unasked = 0
        }
        if refusedCount > 0 {
            log("adapter \(name): refused \(refusedCount) line(s) of its program; the first: \(firstRefusal ?? "")")
            refusedCount = 0
            firstRefusal = nil
        }
        let dropped = outbox.takeDropped()
        if dropped > 0 {
            log("adapter \(name) reads its events too slowly: dropped the \(dropped) oldest (more than \(outbox.eventLimit >> 10) KiB of them waited)")
        }
    }

    /// `{"stop": true}` to every program when the chatbot ends, and a moment (up to a second,
    /// for all of them together) to end; then SIGTERM (they would die with the worker anyway,
    /// but not by their own hand).
    static func stopAll(_ programs: [ProgramChatAdapter]) {
        let running = programs.compactMap { program -> pid_t? in
            guard let child = program.child else { return nil }
            program.outbox.send(JSONLinesFrame.stop.line)
            _ = program.outbox.flush(to: child.input)
            Glibc.close(child.input)
            return child.pid
        }
        var left = Set(running)
        var status: Int32 = 0
        for _ in 0..<100 where !left.isEmpty {
            left = left.filter { waitpid($0, &status, WNOHANG) == 0 }
            if !left.isEmpty { usleep(10_000) }
        }
        for pid in left { Glibc.kill(pid, SIGTERM) }
    }
}
