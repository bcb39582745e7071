import AgentCore
import AgentLoop
import AgentStore
import AgentSupervision
import CAgentSystem
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    /// A worker with a socketpair (fd 3) and a pipe each for stdout and stderr (so that its
    /// log tells them apart): forked by the fork server when
    /// there is one, else posix_spawn of agent-worker.
    /// `module`: the library the worker will run, which a forked worker's zygote loads for it.
    func launchWorker(arguments: [String], module: ModuleLocation? = nil) -> Result<LaunchedWorker, ProcessSpawner.SpawnError> {
        let launched = launchWorkerProcess(arguments: arguments, module: module)
        if case .success(let worker) = launched { containment?.workerStarted(worker.pid) }
        return launched
    }

    private func launchWorkerProcess(arguments: [String], module: ModuleLocation?) -> Result<LaunchedWorker, ProcessSpawner.SpawnError> {
        if let server = forkServers.server, server.isRunning {
            var request = Array(arguments.dropFirst())
            // A library, not a program's manifest nor the built-in chatbot: its zygote loads it.
            let zygote = module.flatMap { $0.library.hasPrefix("/") && !ModuleManifest.isProgramManifest($0.library) ? $0 : nil }
            if let zygote, forkServers.zygoteWanted(for: zygote.library) {
                request += [WorkerMain.moduleFileFlag, zygote.library, "--module", zygote.name]
            }
            let refused = { [unowned self] (refusal: ZygoteRefusal) in
                guard let zygote, forkServers.isNews(refusalOf: zygote.library) else { return }
                let line = refusal.line(module: zygote.name)
                if refusal.isDeclined { logger.info("\(line)") } else { logger.warning("\(line)") }
            }
            switch LaunchedWorker.launch({ channel, stdout, stderr in
                server.spawn(arguments: request, channel: channel, stdout: stdout, stderr: stderr, refused: refused)
            }) {
            case .success(let worker):
                return .success(worker)
            case .failure(let error) where !error.isForkServerRequest:
                // No socket or pipes for the worker: posix_spawn would need them too.
                return .failure(error)
            case .failure(let error) where error.isLackOfResources:
                // The server is fine but could not fork now: this worker is spawned.
                logger.warning("\(error); starting this worker with posix_spawn")
            case .failure(let error):
                // The server may have forked the worker before failing: it then holds the fds
                // just sent, so posix_spawn gets new ones, and the sweep kills that worker.
                if error.errno == EREMOTEIO, let zygote {
                    forkServers.zygoteFailed(for: zygote.library)
                    logger.warning("the zygote of module \(zygote.name) failed a request (no answer in 0.5 s, stopped, or dead); \(zygote.name)'s workers load it themselves until it is rebuilt")
                }
                forkServers.failed("\(error)")
                orphans.scheduleSweep()
            }
        }
        return LaunchedWorker.launch { channel, stdout, stderr in
            ProcessSpawner.spawn(
                path: configuration.workerPath, arguments: arguments,
                environment: SupervisorConfiguration.workerEnvironment(configuration.environment),
                stdout: stdout, stderr: stderr, channel: channel, newGroup: true, cgroup: containment?.workersCgroupFD ?? -1)
        }
    }

    /// Spawns a worker for `process` (or takes the module's warm spare) and sends it its start
    /// frame.
    func spawn(_ process: SupervisedProcess) {
        process.restartTimer = nil
        process.awaitsPredecessor = false
        let worker: LaunchedWorker
        var spare: SparePool.Spare?
        if let taken = spares.take(for: process.module.library) {
            worker = taken.worker
            spare = taken
        } else {
            switch launchWorker(arguments: ["agent-worker", "--process", process.name], module: process.module) {
            case .success(let launched): worker = launched
            case .failure(let error): return failToSpawn(process, error)
            }
        }
        process.adopt(worker)
        setState(process, .starting)
        // The start frame goes first; deliveries queued while the process was down follow.
        attachRing(to: process, given: spare?.rings)
        var frame: [UInt8] = []
        FrameCodec.append(.start, body: Array(process.startFrame.utf8), to: &frame)
        process.queueFirst(frame)
        markDirty(process)
        watchWorker(of: process)
        let pid = worker.pid
        logger.info("started worker pid \(pid) (\(process.type) from module \(process.module.name)\(spare == nil ? "" : ", a warm spare"))", metadata: ["process": "\(process.name)"])
        record(process, "started", "\(process.type) from module \(process.module.name)", pid: pid)
        deadlines.schedule()
    }

    /// Watches the worker's socket, output pipes and pidfd.
    private func watchWorker(of process: SupervisedProcess) {
        loop.register(process.channelFD, events: DeliveryWriter.interest(of: process)) { [unowned self, unowned process] events in
            channelReady(process, events: events)
        }
        for index in process.outputs.indices {
            loop.register(process.outputs[index].fd) { [unowned self, unowned process] _ in
                outputReader.read(process, index)
            }
        }
        if process.pidFD >= 0 {
            loop.register(process.pidFD) { [unowned self, unowned process] _ in
                reap(process)
            }
        }
    }

    /// A start that failed for lack of descriptors, memory or processes is tried again with
    /// backoff (up to 5 s apart): the shortage passes (a flood of connections closes, a child
    /// exits) and the process must not stay `failed` for it. Anything else is a failure.
    private func failToSpawn(_ process: SupervisedProcess, _ error: ProcessSpawner.SpawnError) {
        let metadata: Logger.Metadata = ["process": "\(process.name)"]
        guard error.isLackOfResources else {
            logger.error("cannot start a worker: \(error)", metadata: metadata)
            setState(process, .failed(reason: "cannot start a worker: \(error)"))
            return
        }
        process.startRetries += 1
        let delay = min(5, 0.1 * Double(1 << min(process.startRetries - 1, 6)))
        setState(process, .backoff(retryAt: EventLoop.now() + delay))
        logger.warning("cannot start a worker: \(error); retrying in \(delay.fixed(2)) s (attempt \(process.startRetries + 1))", metadata: metadata)
        process.restartTimer = loop.schedule(after: delay) { [unowned self, unowned process] in
            guard !stopping, case .backoff = process.state else { return }
            spawn(process)
        }
    }

    /// Asks a worker to stop: a stop frame and SIGTERM, then SIGKILL after the stop timeout.
    package func stop(_ process: SupervisedProcess) {
        guard process.hasWorker else { return }
        if process.state == .stopping { return }
        setState(process, .stopping)
        FrameCodec.append(.stop, body: EmptyCollection(), to: process.control)
        markDirty(process)
        flushDirty()
        Glibc.kill(process.pid, SIGTERM)
        // A stopped worker could not stop gracefully.
        if process.suspendedBy != nil { Glibc.kill(process.pid, SIGCONT) }
        let pid = process.pid
        process.stopTimer = loop.schedule(after: process.policy.stopTimeout) { [unowned self, unowned process] in
            guard process.pid == pid else { return }
            logger.warning("did not stop within \(ProcessPolicy.format(process.policy.stopTimeout)) s; sending SIGKILL", metadata: ["process": "\(process.name)"])
            kill(process, reason: "stop timeout")
        }
    }

    /// The worker died: collect what it sent last, its exit status, and decide what comes next.
    func reap(_ process: SupervisedProcess) {
        // Already reaped: pid 0 would make waitpid and kill(-pid) reach the agent's own group.
        guard process.pid > 0 else { return }
        var status: Int32 = 0
        let reaped = waitpid(process.pid, &status, WNOHANG)
        var heldBy: pid_t?
        if reaped == 0 {
            // Dead, but a debugger holds it (a traced zombie is its tracer's to reap first): it
            // ends here all the same, or its pidfd, readable, would wake the loop on every turn
            // and the process would show running until the debugger lets go.
            guard let tracer = OrphanSweeper.debuggerHoldingDead(process.pid) else { return }
            heldBy = tracer
            orphans.reapOnceReleased(process.pid)
        } else if reaped < 0 {
            // Reaped elsewhere (it must not be, but a level-triggered pidfd would otherwise
            // wake the loop forever): treat it as gone with an unknown status.
            guard errno == ECHILD else { return }
            logger.warning("worker pid \(process.pid) was already reaped; its exit status is unknown", metadata: ["process": "\(process.name)"])
            status = 0x7F00
        }
        let pid = process.pid
        process.reapedAt = EventLoop.now()
        salvageOutput(of: process)
        // After the restart below is scheduled, so that the sweep does not delay it.
        defer { orphans.scheduleSweep() }
        let exit = noteExit(of: process, status: heldBy == nil ? status : nil, pid: pid, heldBy: heldBy)
        afterExit(of: process, exit)
    }

    /// Collects what a dead worker left behind (its emit ring, socket and pipes), kills its
    /// children, closes its fds and keeps the events its module never took for the next worker.
    private func salvageOutput(of process: SupervisedProcess) {
        let pid = process.pid
        // Whatever the worker wrote before dying is still in its emit ring, the socket and the
        // pipes.
        if process.channelFD >= 0 {
            drainEmitRing(process, all: true)
            // Then what came on the socket unannounced (a worker that failed before it mapped
            // its rings), in order. The ring is unmapped with the sweep.
            orphans.releaseLater(process.emitRing)
            process.emitRing = nil
            drainChannel(process, all: true)
        }
        for index in process.outputs.indices {
            // Bounded: a child of the worker may still be writing.
            outputReader.read(process, index, budget: 1 << 20)
            outputReader.flushLine(process, index)
        }
        // Its own children go with it; its exit reaper once no restart is starting.
        Glibc.kill(-pid, SIGKILL)
        if process.exitReaper > 0 {
            orphans.expectReaper(process.exitReaper)
            process.exitReaper = 0
        }
        closeWorkerDescriptors(of: process)
        let unseen = process.ring?.unseenFrames()
        // Unmapped with the sweep, once no restart is starting.
        orphans.releaseLater(process.ring)
        detachRing(from: process)
        process.waitingForWritable = false
        if let timer = process.stopTimer {
            loop.cancel(timer)
            process.stopTimer = nil
        }
        // A dead subscriber holds no producer back.
        if !process.pausedProducers.isEmpty { resumeProducers(of: process) }
        keepUndelivered(of: process, unseen: unseen)
    }

    private func closeWorkerDescriptors(of process: SupervisedProcess) {
        for fd in [process.channelFD, process.outputs[0].fd, process.outputs[1].fd, process.pidFD] where fd >= 0 {
            loop.unregister(fd)
            // Closed with the sweep: a socket's close is not free either.
            orphans.closeLater(fd)
        }
        process.channelFD = -1
        process.outputs[0].fd = -1
        process.outputs[1].fd = -1
        process.pidFD = -1
        process.pid = 0
    }

    /// Frames sent on the socket are lost with the worker; those still in its delivery ring
    /// (`unseen`) go first to the next one.
    private func keepUndelivered(of process: SupervisedProcess, unseen: (frames: [UInt8], count: Int, lost: Bool)?) {
        let lost = process.discardSentFrames()
        if lost > 0 {
            process.eventsDropped += lost
            logger.warning("\(lost) event(s) were being delivered when the worker died", metadata: ["process": "\(process.name)"])
        }
        guard let unseen else { return }
        // Its module never saw them: they go first to the next worker.
        process.queueFirst(deliveries: unseen.frames)
        if unseen.count > 0 {
            logger.info("\(unseen.count) event(s) its module had not taken from its delivery ring are kept for the next worker", metadata: ["process": "\(process.name)"])
        }
        if unseen.lost {
            logger.warning("its delivery ring held frames that were not well-formed (the worker wrote to it); the events from there on are lost", metadata: ["process": "\(process.name)"])
        }
    }

    /// Writes down how the worker ended (its process, the history) and tells a task executor's
    /// runner.
    /// `status` nil: a debugger (thread `heldBy`) holds the dead worker, and its exit status.
    private func noteExit(of process: SupervisedProcess, status: Int32?, pid: pid_t, heldBy: pid_t? = nil) -> WorkerExit {
        let code = status.flatMap { ProcessSpawner.exitCode($0) }
        let signal = code == nil ? status.map { ProcessSpawner.termSignal($0) } : nil
        var how = code.map { "exited with status \($0)" } ?? signal.map { "was killed by \(SignalName.of($0))" }
            ?? "died while a debugger (thread \(heldBy ?? 0)) held it, which has its exit status and reaps it"
        if let reason = process.killReason { how += " (\(reason))" }
        process.lastExitCode = code
        process.lastSignal = signal
        process.lastExit = how
        record(process, "exit", how, pid: pid, exitCode: code, signal: signal)
        let wasStopping = process.state == .stopping || stopping
        // A task executor's runs end with it (its runner decides how; it is never restarted).
        process.onWorkerExit?(how)
        let exit = WorkerExit(pid: pid, code: code, how: how, ranFor: EventLoop.now() - process.spawnedAt,
                              wasReady: process.readyAt >= process.spawnedAt, wasStopping: wasStopping)
        process.readyAt = 0
        process.killReason = nil
        return exit
    }

    /// Stopped, failed for good, or restarted after a backoff: what the exit and the restart
    /// policy say.
    private func afterExit(of process: SupervisedProcess, _ exit: WorkerExit) {
        let name: Logger.Metadata = ["process": "\(process.name)"]
        if exit.wasStopping {
            setState(process, .stopped)
            logger.info("worker pid \(exit.pid) stopped (\(exit.how)) after \(exit.ranFor.fixed(2)) s", metadata: name)
            processStopped(process)
            return
        }
        process.failureTimes.append(EventLoop.now())
        if process.failureTimes.count > SupervisedProcess.failuresKept { process.failureTimes.removeFirst() }
        if let failure = process.reportedFailure,
           exit.code == WorkerMain.ExitCode.badSettings || exit.code == WorkerMain.ExitCode.moduleUnusable {
            setState(process, .failed(reason: failure.message))
            logger.error("\(failure.message) — not restarting until this is fixed", metadata: name)
            return
        }
        let failed = exit.code != 0
        let policy = process.policy
        let detail = process.reportedFailure.map { ": \($0.message)" } ?? ""
        let summary = "worker pid \(exit.pid) \(exit.how) after \(exit.ranFor.fixed(2)) s\(exit.wasReady ? "" : " before it was ready")\(detail)"
        if policy.restart == .never || (policy.restart == .onFailure && !failed) {
            setState(process, failed ? .failed(reason: exit.how + detail) : .exited(code: exit.code ?? 0))
            logger.log(level: failed ? .error : .info, "\(summary); restart policy is \(policy.restart.rawValue), not restarting", metadata: name)
            return
        }
        restart(process, after: exit, summary: summary)
    }

    /// Restarts after a backoff, unless the start limit (at most max_restarts within `within`
    /// seconds) is reached: then the process has failed.
    private func restart(_ process: SupervisedProcess, after exit: WorkerExit, summary: String) {
        let name: Logger.Metadata = ["process": "\(process.name)"]
        let policy = process.policy
        let now = EventLoop.now()
        process.restartTimes.removeAll { $0 < now - policy.within }
        if let limit = policy.maximumRestarts, process.restartTimes.count >= limit {
            // What the worker said of its end (a program's own status, a module's error) with it.
            let said = process.reportedFailure.map { ": \($0.message)" } ?? ""
            let reason = "restarted \(process.restartTimes.count) times within \(ProcessPolicy.format(policy.within)) s (the start limit); last: \(exit.how)\(said)"
            setState(process, .failed(reason: reason))
            logger.error("\(summary); \(reason) — not restarting; `agent-control process start \(process.name)` tries again", metadata: name)
            return
        }
        if exit.wasReady, exit.ranFor >= policy.resetAfter { process.consecutiveFailures = 0 }
        process.consecutiveFailures += 1
        let delay = policy.delay(afterFailuresInARow: process.consecutiveFailures)
        process.restarts += 1
        process.restartTimes.append(now)
        // A module whose process crashed gets a warm spare once things are calm again.
        spares.want(process.module.library)
        setState(process, .backoff(retryAt: now + delay))
        logger.warning("\(summary); restarting in \(delay.fixed(2)) s (restart \(process.restarts))", metadata: name)
        // Without a backoff a warm spare is adopted in this very turn: its start frame goes at
        // the turn's end, with no timer and no turn in between (it makes no descriptor that a
        // later event of this turn could be taken for; a spare found unusable then is dropped,
        // its descriptors closed with the sweep, so a worker started instead gets other numbers).
        if delay <= 0, spares.hasSpare(process.module.library) { return spawn(process) }
        process.restartTimer = loop.schedule(after: delay) { [unowned self, unowned process] in
            guard !stopping, case .backoff = process.state else { return }
            spawn(process)
        }
    }

    /// Called when a worker reported ready: makes the module's warm spare if it wants one (see
    /// ``SparePool``).
    func replenishSpare(for library: String) {
        // A jsonl/1 module's worker starts its program only with the start frame: no spare.
        guard spares.lacksSpare(library), !stopping, library != BuiltinModules.chatLocation.library,
              !ModuleManifest.isProgramManifest(library) else { return }
        let location = processes.first { $0.module.library == library }?.module
        let module = location?.name ?? library
        switch launchWorker(arguments: ["agent-worker", "--spare", library, "--module", module], module: location) {
        case .success(let spare):
            // Its rings now, mapped while it waits: adopting it is then one frame.
            var rings: WorkerRings?
            if configuration.sharedRings {
                do { rings = try WorkerRings.make(sendingOn: spare.channelFD) } catch { logger.notice("the spare worker for \(module) gets its rings when adopted: \(error)") }
            }
            spares.add(spare, rings: rings, for: library)
        case .failure(let error): logger.warning("cannot start a spare worker for \(module): \(error)")
        }
    }

    /// Records a state change (the log says every one that users care about; the store keeps it).
    func setState(_ process: SupervisedProcess, _ state: ProcessState) {
        process.state = state
        process.stateSince = EventLoop.now()
        systemd.stateChanged()
        switch state {
        case .backoff(let at): record(process, "backoff", "retry in \(max(0, at - EventLoop.now()).fixed(2)) s")
        case .failed(let reason): record(process, "failed", reason)
        case .exited(let code): record(process, "exited", "status \(code)", exitCode: code)
        case .stopped: record(process, "stopped")
        case .stopping: record(process, "stopping")
        case .starting, .running: break
        }
    }

    /// A line of run history in the store, group-committed (a start of many workers records
    /// two lines each).
    func record(_ process: SupervisedProcess, _ event: String, _ detail: String = "", pid: Int32? = nil, exitCode: Int32? = nil, signal: Int32? = nil) {
        store?.record(HistoryEntry(time: Date().timeIntervalSince1970, process: process.name, event: event, detail: detail,
                                   pid: pid ?? (process.pid > 0 ? process.pid : nil), exitCode: exitCode, signal: signal.map(SignalName.of)),
                      atOnce: false)
    }

    /// Kills a worker's whole process group, noting why for the exit message.
    package func kill(_ process: SupervisedProcess, reason: String) {
        guard process.hasWorker else { return }
        process.killReason = reason
        Glibc.kill(-process.pid, SIGKILL)
        Glibc.kill(process.pid, SIGKILL)
    }

    /// A stopped worker is gone: run what waited for it.
    func processStopped(_ process: SupervisedProcess) {
        let waiting = process.onStopped
        process.onStopped = []
        for action in waiting { action() }
    }
}
