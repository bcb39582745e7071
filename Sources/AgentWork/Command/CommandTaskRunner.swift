import AgentBase
import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import JSONSchema
import Logging

/// The built-in `command` task type: each attempt runs an external program.
///
/// The program is spawned on the loop thread (no shell unless the task says `"shell": true`),
/// leading a process group of its own, in a cgroup of its own (``RunCgroup``, a child of the
/// agent's: clone3 puts it there before its first instruction) or, without cgroups, with its
/// group recorded in the agent's containment, so that its whole tree is killed at its end, a
/// cancel, a timeout or the agent's stop and nothing of it outlives the run. Its
/// stdin gets the run's input as JSON (then end of file); stdout becomes the output (bounded),
/// the tail of stderr is kept; the exit is noticed through a pidfd and the pipes are read as
/// they fill, all on the supervisor's ``EventLoop``, without threads of its own.
///
/// A cancel sends SIGTERM to the group (and to everything in the run's cgroup) and SIGKILL
/// (`cgroup.kill`) after the task's `cancel_grace` (``Limits/cancelGrace`` when it gives
/// none); so does the agent's stop (the coordinator cancels running runs as interrupted). A
/// timeout kills at once (the time is up), and so does ``shutDown()``, the stop's last word:
/// nothing may be left behind. When the program exits, what is left of its group and cgroup is
/// killed too: a run ends with its program, and is reported only once its cgroup is empty (so
/// that a retry never runs beside what the attempt before it started), with what it used.
@LoopActor
package final class CommandTaskRunner: @LoopActor TaskRunner {
    /// How much of a command's output is kept, and how long a cancelled one may take to end.
    package struct Limits {
        /// Bytes of stdout kept as the output; more is read and counted, and the output says so.
        package var stdoutBytes = 1 << 20
        /// The stderr tail, and each attempt's stdout tail: at most these many bytes and lines.
        package var stderrBytes = 64 << 10
        package var stderrLines = 200
        /// Seconds from SIGTERM to SIGKILL when a run is cancelled and its task gives no `cancel_grace`.
        package var cancelGrace = 2.0

        package init() {}
    }

    package let loop: EventLoop
    /// A command's `INPUT_*` and `{{input.…}}` read the input as a value.
    package var readsInputValue: Bool { true }
    /// Where commands run unless their task names a `directory` (relative ones start here).
    package let agentDirectory: String
    /// The runtime's environment, which every command gets (plus its task's and the run's).
    package let environment: [String: String]
    package let containment: WorkerContainment?
    package let limits: Limits
    package let logger: Logger
    package private(set) var runs: [String: CommandRun] = [:]
    private(set) var stopped = false
    /// Runs whose command could not start for want of descriptors or processes, each waiting
    /// for its next try (see ``launchLater(_:_:)``).
    var launchWaiting: [String: (run: CommandRun, timer: Int)] = [:]
    /// Whether the last ``launch(_:)`` failed for want of descriptors or processes.
    var launchLacked = false
    /// Runs whose large input is being read into a value off the loop before their launch
    /// (see ``readInputAside(_:)``).
    var inputReading: [String: CommandRun] = [:]
    /// A look for the runs' dead daemons is scheduled (see ``childrenChanged()``).
    var daemonLookScheduled = false
    /// Read into on the loop; `nonisolated(unsafe)` only so that the (nonisolated) deinit frees it.
    private nonisolated(unsafe) let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)

    package init(loop: EventLoop, agentDirectory: String, environment: [String: String],
         containment: WorkerContainment? = nil, limits: Limits = Limits(), logger: Logger) {
        self.loop = loop
        self.agentDirectory = agentDirectory
        self.environment = environment
        self.containment = containment
        self.limits = limits
        self.logger = logger
        // A command that closes stdin before reading its input must cost an EPIPE, not the
        // agent (the supervisor ignores SIGPIPE too).
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Whether `pid` is a process of a command running now: of its process group (led by the
    /// command's pid) or in its run's cgroup. The supervisor's orphan sweep leaves them alone.
    package func owns(_ pid: pid_t) -> Bool {
        // Asked of every child the sweep of orphans looks at: nothing read when none runs.
        guard !runs.isEmpty else { return false }
        let groups = Set(runs.values.map(\.pid).filter { $0 > 0 })
        if groups.contains(pid) || ProcStat.read(pid).map({ groups.contains($0.group) }) == true { return true }
        return runs.values.contains { run in run.cgroup.map { WorkerCgroup.members($0.path).contains(pid) } == true }
    }

    package func start(_ start: TaskRunStart, report: @escaping (TaskRunReport) -> Void) {
        let run = CommandRun(start: start, limits: limits, report: report)
        if stopped {
            return finishUnstarted(run, "the agent is stopping; the command was not started")
        }
        if runs[start.runID] != nil || launchWaiting[start.runID] != nil || inputReading[start.runID] != nil {
            return finishUnstarted(run, "run \(start.runID) is already running a command")
        }
        if start.held.isTextOnly { return readInputAside(run) }
        begin(run)
    }

    /// Launches `run`'s command and watches it; one that lacks descriptors or processes waits.
    func begin(_ run: CommandRun) {
        if let failure = launch(run) {
            if launchLacked { return launchLater(run, failure) }
            logger.notice("task \(run.start.task.name): \(failure)", metadata: ["run": "\(run.runID)"])
            return finishUnstarted(run, failure)
        }
        runs[run.runID] = run
        watch(run)
    }

    package func cancel(runID: String, reason: TaskRunOutcome.Status) {
        if cancelWaiting(runID, reason: reason) || cancelReading(runID, reason: reason) { return }
        guard let run = runs[runID] else { return }
        guard run.pid > 0 else {
            // Ended already: by an earlier cancel or timeout (its cgroup still emptying), or on
            // its own a moment before (its output being made): the run ends as the program did.
            guard run.endReason == nil else { return }
            let what = reason == .timedOut ? "its timeout" : reason == .interrupted ? "the agent's stop" : "the cancel"
            logger.notice("task \(run.start.task.name): the command had ended by itself before \(what); the run is reported as it ended", metadata: ["run": "\(run.runID)"])
            return
        }
        if run.endReason == nil { run.endReason = reason }
        noteMembers(of: run)
        // A cancel and the agent's stop give the program its grace; a timeout does not.
        if reason != .timedOut, run.killTimer == nil {
            Glibc.kill(-run.pid, SIGTERM)
            // A stopped program could not act on SIGTERM.
            Glibc.kill(-run.pid, SIGCONT)
            // What left the group (a daemon) is told too.
            run.cgroup?.signal(SIGTERM)
            run.cgroup?.signal(SIGCONT)
            run.killTimer = loop.schedule(after: run.start.task.cancelGrace ?? limits.cancelGrace) { [weak self, weak run] in
                guard let self, let run, run.pid > 0 else { return }
                run.killTimer = nil
                killTrees([run])
            }
        } else {
            killTrees([run])
        }
    }

    package func shutDown() {
        stopped = true
        endWaiting()
        for runID in Array(inputReading.keys) { _ = cancelReading(runID, reason: .interrupted) }
        let going = runs.values.sorted { $0.startedAt < $1.startedAt }
        for run in going where run.endReason == nil && run.pid > 0 {
            run.endReason = .interrupted
        }
        killTrees(going)
        // The loop may not turn again: each is waited for here (SIGKILL leaves it no choice).
        for run in going where run.pid > 0 {
            var status: Int32 = 0
            let deadline = EventLoop.now() + 2
            var reaped = waitpid(run.pid, &status, WNOHANG)
            while reaped == 0, EventLoop.now() < deadline {
                usleep(1_000)
                reaped = waitpid(run.pid, &status, WNOHANG)
            }
            if reaped == 0 {
                logger.warning("command pid \(run.pid) did not die within 2 s of SIGKILL; the agent's containment ends it at the stop",
                               metadata: ["run": "\(run.runID)"])
                status = Int32(SIGKILL)
            }
            finish(run, status: status)
        }
        // The loop may not turn again: texts being made off it are made here.
        for run in going {
            if let status = run.exitStatus { ended(run, status: status, texts: run.captures.texts()) }
        }
        // And so is each cgroup to empty.
        for run in going where run.ending != nil {
            let deadline = EventLoop.now() + 2
            while run.cgroup?.isPopulated == true, EventLoop.now() < deadline {
                run.cgroup?.kill()
                usleep(2_000)
            }
            settle(run, finally: true)
        }
    }

    // MARK: The running program

    private func watch(_ run: CommandRun) {
        if run.pidFD >= 0 {
            loop.register(run.pidFD) { [unowned self, unowned run] _ in reap(run) }
        } else {
            poll(run)
        }
        loop.register(run.stdoutFD) { [unowned self, unowned run] _ in readStdout(run) }
        loop.register(run.stderrFD) { [unowned self, unowned run] _ in readStderr(run) }
        if run.stdinFD >= 0 {
            loop.register(run.stdinFD, events: EventLoop.writable) { [unowned self, unowned run] _ in writeInput(run) }
        }
    }

    /// Without a pidfd (before Linux 5.3), the exit is looked for every 10 ms.
    private func poll(_ run: CommandRun) {
        run.pollTimer = loop.schedule(after: 0.01) { [weak self, weak run] in
            guard let self, let run, run.pid > 0 else { return }
            run.pollTimer = nil
            reap(run)
            if run.pid > 0 { poll(run) }
        }
    }

    private func reap(_ run: CommandRun) {
        guard run.pid > 0 else { return }
        var status: Int32 = 0
        let reaped = waitpid(run.pid, &status, WNOHANG)
        if reaped == 0 { return }
        if reaped < 0 {
            guard errno == ECHILD else { return }
            logger.warning("command pid \(run.pid) was reaped elsewhere; its exit status is unknown", metadata: ["run": "\(run.runID)"])
            status = 0x7F00
        }
        finish(run, status: status)
    }

    /// The program is reaped: what is still in its pipes is read, whatever it left running is
    /// killed, and the run is reported once that is gone.
    private func finish(_ run: CommandRun, status: Int32) {
        let pid = run.pid
        // Bounded: something it started may still be writing.
        if run.stdoutFD >= 0 { readStdout(run, budget: limits.stdoutBytes + (1 << 20)) }
        if run.stderrFD >= 0 { readStderr(run, budget: 4 << 20) }
        // Its group goes with it; the group exists as long as a member does, so its id is not
        // reused meanwhile.
        Glibc.kill(-pid, SIGKILL)
        run.pid = 0
        close(run)
        reapLeftovers(group: pid, tries: 20)
        run.endedAt = EventLoop.now()
        if let cgroup = run.cgroup {
            // Daemons it left become the agent's children (a subreaper): reaped as they die —
            // those there now, and those a cancel or timeout found there before its kill (dead
            // by now, gone from the cgroup: they stayed the agent's zombies, a pid each).
            let members = WorkerCgroup.members(cgroup.path) + run.killedMembers
            run.killedMembers = []
            cgroup.kill()
            if !members.isEmpty { reap(members, tries: 20) }
        }
        let captures = run.captures
        // At the stop the loop may not turn again: ``shutDown()`` makes them itself.
        if captures.isLarge, !stopped {
            run.exitStatus = status
            makeTextsAside(run, captures)
        } else {
            ended(run, status: status, texts: captures.texts())
            settle(run)
        }
    }

    /// Reports the ended run once its cgroup is empty (looked at every 10 ms, killed again each
    /// time: a fork may race the kill), with what it used; then removes the cgroup. `finally`
    /// (the agent's stop): reports it even if it is not empty (the agent's cgroup goes next).
    func settle(_ run: CommandRun, finally: Bool = false) {
        guard var outcome = run.ending else { return }
        if let timer = run.settleTimer { loop.cancel(timer) }
        run.settleTimer = nil
        if let cgroup = run.cgroup {
            if cgroup.isPopulated, !finally {
                cgroup.kill()
                let waited = EventLoop.now() - run.endedAt
                if waited > 10, !run.slowToSettle {
                    run.slowToSettle = true
                    logger.warning("the cgroup \(cgroup.path) still holds processes \(Int(waited)) s after cgroup.kill (in uninterruptible sleep?); the run is reported, and its next attempt starts, once it is empty",
                                   metadata: ["run": "\(run.runID)"])
                }
                run.settleTimer = loop.schedule(after: 0.01) { [weak self, weak run] in
                    guard let self, let run else { return }
                    run.settleTimer = nil
                    settle(run)
                }
                return
            }
            outcome.usage = cgroup.usage()
        }
        run.ending = nil
        runs[run.runID] = nil
        run.report(.finished(outcome))
        // Once reported: the empty folder's removal (the kernel's, 50 µs) need not delay the end.
        if let cgroup = run.cgroup, case let code = cgroup.remove(), code != 0, code != EBUSY {
            logger.warning("cannot remove the cgroup \(cgroup.path): \(String(cString: strerror(code))); the agent's stop removes it", metadata: ["run": "\(run.runID)"])
        }
    }

    /// The run's program has ended with `status` and its pipes' `texts` are made: its outcome.
    func ended(_ run: CommandRun, status: Int32, texts: CommandCaptures.Texts) {
        run.exitStatus = nil
        run.ending = run.outcome(status: status, texts: texts)
        // Not a bare "killed by SIGKILL" (or a shell's 137): the limit that did it.
        if run.ending?.status == .failed, let reason = run.cgroup?.memoryLimitReason() { run.ending?.error = reason }
    }

    private func close(_ run: CommandRun) {
        for fd in run.fds {
            loop.unregister(fd)
            Glibc.close(fd)
        }
        run.pidFD = -1
        run.stdinFD = -1
        run.stdoutFD = -1
        run.stderrFD = -1
        for timer in [run.killTimer, run.pollTimer].compactMap({ $0 }) { loop.cancel(timer) }
        run.killTimer = nil
        run.pollTimer = nil
    }

    /// SIGKILL to the programs' groups and cgroups; without a cgroup, then to what of them
    /// left their group (reaped here if they are the agent's children by then).
    private func killTrees(_ runs: [CommandRun]) {
        let going = runs.filter { $0.pid > 0 }
        for run in going {
            noteMembers(of: run)
            Glibc.kill(-run.pid, SIGKILL)
            run.cgroup?.kill()
        }
        let loose = going.filter { $0.cgroup == nil }
        guard !loose.isEmpty else { return }
        let escapees = killEscapees(of: Set(loose.map(\.runID)), outside: Set(loose.map(\.pid)))
        if !escapees.isEmpty {
            logger.notice("killed \(escapees.count) process\(escapees.count == 1 ? "" : "es") (pid \(escapees.map(String.init).joined(separator: ", "))) that had left the process group of \(loose.count == 1 ? "run \(loose[0].runID)" : "the runs")")
            reap(escapees, tries: 20)
        }
    }

    /// Notes the members of `run`'s cgroup before a signal ends them: those that left the
    /// program's group die as the agent's children (a subreaper) and leave the cgroup, so the
    /// program's end would not find them there; they are reaped by pid with the rest.
    private func noteMembers(of run: CommandRun) {
        guard let cgroup = run.cgroup else { return }
        let known = Set(run.killedMembers)
        run.killedMembers += WorkerCgroup.members(cgroup.path).filter { !known.contains($0) }
    }

    /// A child subreaper (the supervisor) inherits what a command's tree leaves when its
    /// parents die: those of the command's group are reaped here once killed (a few tries
    /// while they die). Without being a subreaper there is nothing to reap (ECHILD).
    private func reapLeftovers(group: pid_t, tries: Int) {
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(-group, &status, WNOHANG) } while reaped > 0
        // 0: some are still dying; -1 (ECHILD): none is the agent's child.
        guard tries > 1, reaped == 0 else { return }
        loop.schedule(after: 0.05) { [weak self] in self?.reapLeftovers(group: group, tries: tries - 1) }
    }

    /// Reaps `pids` that are (or become) the agent's children, as they die.
    private func reap(_ pids: [pid_t], tries: Int) {
        var status: Int32 = 0
        // ECHILD: not (yet) the agent's child; its parent may be dying.
        let left = pids.filter { waitpid($0, &status, WNOHANG) != $0 }
        guard !left.isEmpty, tries > 1 else { return }
        loop.schedule(after: 0.05) { [weak self] in self?.reap(left, tries: tries - 1) }
    }

    /// A run that never got a process is finished on the next turn of the loop, not inside
    /// ``start(_:report:)``: the caller has not finished recording the start yet.
    func finishUnstarted(_ run: CommandRun, _ reason: String, status: TaskRunOutcome.Status = .failed) {
        loop.schedule(after: 0) {
            run.report(.finished(TaskRunOutcome(status: status, error: reason)))
        }
    }

    // MARK: Pipes

    private func readStdout(_ run: CommandRun, budget: Int = 256 << 10) {
        drain(run, fd: run.stdoutFD, budget: budget) {
            run.stdout.append($0)
            run.stdoutTail.append($0)
        } closed: {
            run.stdoutFD = -1
        }
    }

    private func readStderr(_ run: CommandRun, budget: Int = 256 << 10) {
        drain(run, fd: run.stderrFD, budget: budget) { run.stderr.append($0) } closed: {
            run.stderrFD = -1
        }
    }

    /// Reads `fd` until it has nothing more now (or `budget` bytes, so that one chatty command
    /// does not hold the loop); at the end of file it is closed.
    private func drain(_ run: CommandRun, fd: Int32, budget: Int, into sink: (UnsafeRawBufferPointer) -> Void, closed: () -> Void) {
        guard fd >= 0 else { return }
        var left = budget
        while left > 0 {
            let count = read(fd, readBuffer.baseAddress, readBuffer.count)
            if count > 0 {
                sink(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
                left -= count
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN { return }
            // End of file (or a failed pipe): nothing more comes.
            loop.unregister(fd)
            Glibc.close(fd)
            closed()
            return
        }
    }

    /// Writes the rest of the input as stdin takes it, then closes stdin.
    private func writeInput(_ run: CommandRun) {
        guard run.stdinFD >= 0 else { return }
        while run.inputOffset < run.pendingInput.count {
            let written = run.pendingInput.withUnsafeBytes { bytes in
                write(run.stdinFD, bytes.baseAddress! + run.inputOffset, bytes.count - run.inputOffset)
            }
            if written > 0 {
                run.inputOffset += written
                continue
            }
            if written < 0, errno == EINTR { continue }
            if written < 0, errno == EAGAIN { return }
            // EPIPE: the program closed stdin without reading it all; that is its business.
            break
        }
        run.pendingInput = []
        loop.unregister(run.stdinFD)
        Glibc.close(run.stdinFD)
        run.stdinFD = -1
    }
}
