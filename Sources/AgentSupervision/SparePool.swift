import AgentLoop
import CAgentSystem
import Foundation

/// After a process of a module crashed, the supervisor keeps one warm spare worker for that
/// module: spawned, the module already loaded, its rings mapped (``WorkerRings``), its host's
/// threads and exit reaper started, waiting for a start frame. The next restart adopts it
/// instead of paying for exec, dynamic linking, dlopen and the rings: one frame on its socket. Healthy agents keep no spare; a spare is made
/// only once the restarted worker is ready, so it never competes with it.
@LoopActor
package final class SparePool {
    /// Warm spare workers by module library.
    private var spares: [String: Spare] = [:]
    /// The libraries that want one (a process of theirs crashed).
    private var wanted: Set<String> = []
    private let loop: EventLoop
    /// Called when a spare ended unadopted: its exit reaper, started while it waited (and
    /// named in no ready frame), is then the supervisor's child for a sweep to end.
    package var spareEnded: () -> Void = {}
    /// Closes a dropped spare's descriptor (unregistered from the loop): after the turn, so that
    /// an event of this turn for it cannot reach a worker started meanwhile with its number.
    package var closeLater: (Int32) -> Void = { Glibc.close($0) }

    /// A spare and the rings it was given when it was made (nil: none could be made; the
    /// adoption makes them).
    package struct Spare {
        package var worker: LaunchedWorker
        package var rings: WorkerRings?
        /// The library's identity when the spare was made (``ModuleDescriber/identity(_:)``).
        var identity: String
    }

    package init(loop: EventLoop) {
        self.loop = loop
    }

    /// The pids of the spares (not orphans).
    package var pids: [pid_t] { spares.values.map(\.worker.pid) }

    /// A process of `library` crashed: it gets a spare once its restart is ready.
    package func want(_ library: String) {
        wanted.insert(library)
    }

    /// Whether `library` has a spare to adopt.
    package func hasSpare(_ library: String) -> Bool { spares[library] != nil }

    /// Whether `library` wants a spare and has none.
    package func lacksSpare(_ library: String) -> Bool {
        wanted.contains(library) && spares[library] == nil
    }

    /// The module's spare, if it has one, no longer watched: the caller adopts its fds. A spare
    /// made before the library changed on disk (a rebuilt module) has the old code loaded: it
    /// is killed instead, and the caller starts a worker that loads the library as it is now.
    package func take(for library: String) -> Spare? {
        guard let spare = spares[library] else { return nil }
        // Nor one that is stopped (SIGSTOP: it would not start until SIGCONT) or already dead
        // (its death not handled yet).
        let unusable = agent_child_is_stopped_or_dead(spare.worker.pid) == 1
        guard !unusable, ModuleDescriber.identity(library) == spare.identity else {
            drop(library)
            return nil
        }
        spares[library] = nil
        loop.unregister(spare.worker.pidFD)
        loop.unregister(spare.worker.stdoutFD)
        loop.unregister(spare.worker.stderrFD)
        return spare
    }

    /// Keeps a freshly launched spare, watching for its death and draining its output.
    package func add(_ spare: LaunchedWorker, rings: WorkerRings?, for library: String) {
        spares[library] = Spare(worker: spare, rings: rings, identity: ModuleDescriber.identity(library))
        if spare.pidFD >= 0 {
            loop.register(spare.pidFD) { [unowned self] _ in spareDied(library, pid: spare.pid) }
        }
        for fd in [spare.stdoutFD, spare.stderrFD] {
            loop.register(fd) { [unowned self] _ in drainOutput(fd) }
        }
    }

    private func spareDied(_ library: String, pid: pid_t) {
        guard let spare = spares[library], spare.worker.pid == pid else { return }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        // Dead but held by a debugger (only its tracer can reap it first): ended all the same,
        // or its readable pidfd would wake the loop on every turn; the sweep reaps it later.
        guard reaped == pid || (reaped < 0 && errno == ECHILD) || (reaped == 0 && OrphanSweeper.debuggerHoldingDead(pid) != nil) else { return }
        spares[library] = nil
        close(spare)
        spareEnded()
    }

    /// A spare says nothing anyone reads (its module is loaded, not started).
    private func drainOutput(_ fd: Int32) {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { buffer in
            while true {
                let n = read(fd, buffer.baseAddress, buffer.count)
                if n < 0, errno == EINTR { continue }
                if n == 0 { loop.unregister(fd) }
                if n <= 0 { return }
            }
        }
    }

    /// Kills the spares of libraries not in `libraries` (a reload took their module away) and
    /// forgets that they wanted one.
    package func keepOnly(_ libraries: Set<String>) {
        wanted.formIntersection(libraries)
        for library in spares.keys where !libraries.contains(library) { drop(library) }
    }

    /// Kills and reaps every spare (at stop).
    package func dropAll() {
        for library in spares.keys { drop(library) }
    }

    /// Kills and reaps the spare of `library` (an idle process: its end takes the kernel about
    /// a millisecond; its exit reaper, found by the sweep, frees its memory). Its death is
    /// waited for a second at most, and a dead spare a debugger holds (only its tracer can
    /// reap it first) is left to the sweep of orphans: a blocking wait held the loop for as
    /// long as the debugger held it.
    private func drop(_ library: String) {
        guard let spare = spares.removeValue(forKey: library) else { return }
        let pid = spare.worker.pid
        Glibc.kill(pid, SIGKILL)
        PidFD.awaitExit(spare.worker.pidFD, within: 1)
        var status: Int32 = 0
        _ = waitpid(pid, &status, WNOHANG)
        close(spare)
        spareEnded()
    }

    private func close(_ spare: Spare) {
        for fd in spare.worker.fds where fd >= 0 {
            loop.unregister(fd)
            closeLater(fd)
        }
        spare.rings?.close()
    }
}
