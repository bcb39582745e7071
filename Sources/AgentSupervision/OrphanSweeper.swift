import AgentLoop
import CAgentSystem
import AgentCore
import Foundation
import Logging

/// The supervisor as a child subreaper: what a worker started and left behind (even in its
/// own session, out of reach of the process-group kill) becomes the supervisor's child when
/// the worker dies, and is killed and reaped here.
@LoopActor
package final class OrphanSweeper {
    /// Whether ``becomeSubreaper()`` succeeded.
    package private(set) var isSubreaper = false
    /// Orphans of dead workers being killed: pid → command name, whether the log names it once
    /// reaped (not one already dying when found: a zygote its fork server's death killed), and
    /// how many processes it had started (killed with it).
    private var orphans: [Int32: (name: String, told: Bool, descendants: Int)] = [:]
    /// Dead children a debugger holds (a traced zombie is reaped by its tracer first): not
    /// waited for, reaped by a later sweep once the debugger lets go.
    private var heldByDebugger: Set<pid_t> = []
    /// Descendants of orphans killed but not yet reaped: each becomes the supervisor's child as
    /// its parent dies, and is only reaped then, not looked at again.
    private var killedDescendants: Set<pid_t> = []
    private var debuggerCheckScheduled = false
    private var sweepScheduled = false
    private let loop: EventLoop
    private let logger: Logger
    /// The supervisor's children that are no orphans: its workers, spares and fork server.
    private let living: () -> Set<pid_t>
    /// Whether a child is the program of a `command` task (not an orphan either).
    private let isTaskProcess: (pid_t) -> Bool
    /// Whether a worker is in the first moments of its start (a restart in flight): the sweep
    /// waits for it.
    private let isStarting: () -> Bool
    /// When the sweep was first put off for a starting worker (nil: it is not).
    private var deferredSince: Double?
    private var retryScheduled = false
    /// Exit reapers of dead workers (named by their ready frames, or found by their name when
    /// the worker died before its ready frame was read), to end quietly.
    private var reapers: Set<pid_t> = []
    /// What dead workers left that costs time to free — their rings' mappings (an unmap is a
    /// TLB shootdown on every core) and their descriptors — kept until the sweep, which frees
    /// them off the restart's path.
    private var leftovers: [AnyObject] = []
    private var leftoverFDs: [Int32] = []
    /// The longest a sweep waits for starting workers (one stuck in its start does not keep
    /// orphans alive until its start timeout), well under a reaper's own second.
    static let longestDeferral = 0.25
    /// Dead workers' reapers kept waiting at most: beyond, the sweep does not wait (each holds
    /// a dead worker's memory and a pid).
    static let mostWaitingReapers = 16

    /// An embedded supervisor torn down before its next sweep still closes what it kept.
    deinit {
        for fd in leftoverFDs { close(fd) }
    }

    package init(loop: EventLoop, logger: Logger, living: @escaping () -> Set<pid_t>, isTaskProcess: @escaping (pid_t) -> Bool,
                 isStarting: @escaping () -> Bool = { false }) {
        self.loop = loop
        self.logger = logger
        self.living = living
        self.isTaskProcess = isTaskProcess
        self.isStarting = isStarting
    }

    /// A worker became ready: a sweep put off for it runs soon, off the turn that handled the
    /// ready frame and the new worker's first moments.
    package func workerBecameReady() {
        guard deferredSince != nil else { return }
        loop.schedule(after: 0.005) { [unowned self] in
            if deferredSince != nil { sweep() }
        }
    }

    /// A dead worker's exit reaper (exit_reaper.c): it holds the worker's memory, which ending
    /// it frees; the next sweep does, quietly.
    package func expectReaper(_ pid: pid_t) {
        reapers.insert(pid)
    }

    /// Keeps `objects` (a dead worker's rings) alive until the next sweep.
    package func releaseLater(_ object: AnyObject?) {
        guard let object else { return }
        leftovers.append(object)
        if leftovers.count > Self.mostLeftovers { freeLeftovers() }
    }

    /// Closes `fd` (a dead worker's, unregistered from the loop) at the next sweep.
    package func closeLater(_ fd: Int32) {
        guard fd >= 0 else { return }
        leftoverFDs.append(fd)
        if leftoverFDs.count > Self.mostLeftovers { freeLeftovers() }
    }

    /// Leftovers kept at most (a crash loop's deaths between two sweeps): beyond, they are
    /// freed at once rather than hold descriptors and mappings.
    static let mostLeftovers = 64

    /// Frees what dead workers left (see ``leftovers``).
    private func freeLeftovers() {
        leftovers.removeAll()
        for fd in leftoverFDs { close(fd) }
        leftoverFDs.removeAll()
    }

    /// No orphan is waiting to be reaped. Exit reapers are not waited for: killed, they end
    /// within milliseconds (the kernel freeing their worker's memory), and an agent's stop
    /// need not wait for that, as it did not wait before there were reapers.
    package var isEmpty: Bool { orphans.isEmpty }

    /// Makes this process a child subreaper (called by the supervisor's `run()`).
    package func becomeSubreaper() {
        if agent_set_child_subreaper() == 0 {
            isSubreaper = true
        } else {
            logger.warning("cannot become a child subreaper (\(String(cString: strerror(errno)))); children that workers move to another session may outlive them")
        }
    }

    /// A dead worker a debugger holds (see ``debuggerHoldingDead(_:)``), handled as dead by
    /// the supervisor: reaped by a sweep once the debugger lets go.
    package func reapOnceReleased(_ pid: pid_t) {
        heldByDebugger.insert(pid)
        scheduleSweep()
    }

    /// Sweeps on the next loop turn (after a worker died: after any restart was scheduled).
    package func scheduleSweep() {
        guard !sweepScheduled else { return }
        sweepScheduled = true
        loop.schedule(after: 0) { [unowned self] in
            sweepScheduled = false
            sweep()
        }
    }

    /// Kills and reaps children of the supervisor that are not workers (nor `command` tasks'
    /// programs): orphans of dead workers. Retries until they are reaped.
    package func sweep() {
        // While a worker starts (a restart in flight) the sweep waits for it: killing a dead
        // worker's exit reaper frees its memory, and the kernel's teardown, a millisecond of a
        // core, must not delay the replacement (nor the reading of /proc the sweep itself).
        let now = EventLoop.now()
        if reapers.count <= Self.mostWaitingReapers, isStarting(), now - (deferredSince ?? now) < Self.longestDeferral {
            // Those that ended on their own cost nothing to reap.
            reapEndedReapers()
            if deferredSince == nil { deferredSince = now }
            if !retryScheduled {
                retryScheduled = true
                loop.schedule(after: 0.05) { [unowned self] in
                    retryScheduled = false
                    if deferredSince != nil { sweep() }
                }
            }
            return
        }
        deferredSince = nil
        freeLeftovers()
        // Only a subreaper's other children are orphans of its workers: a supervisor embedded
        // in another program (a test, a tool) must leave that program's children alone.
        guard isSubreaper else {
            if endReapers() {
                loop.schedule(after: 0.05) { [unowned self] in sweep() }
            } else {
                reapReleased()
            }
            return
        }
        let (found, deferred) = killNewOrphans()
        let reapersLeft = endReapers()
        reapOrphans()
        if !orphans.isEmpty || found > 0 || deferred || reapersLeft {
            loop.schedule(after: 0.05) { [unowned self] in sweep() }
        } else {
            reapReleased()
        }
    }

    /// Kills the supervisor's children that are not workers (nor `command` tasks' programs,
    /// nor known); returns how many, and whether some were left for the next sweep.
    private func killNewOrphans() -> (found: Int, deferred: Bool) {
        let workers = living()
        var found = 0
        var dying = false
        var sawKilled = false
        var budget = Self.readsPerSweep
        // As a subreaper the supervisor's children are its workers and their orphans (and
        // the describe workers of a settings check): the kernel lists them per thread, which
        // is far cheaper than scanning /proc.
        let deferred = DescribeWorkers.whileListed { describing in
            for pid in Self.children() where !workers.contains(pid) && !describing.contains(pid) && orphans[pid] == nil
                && !reapers.contains(pid) && !heldByDebugger.contains(pid) && !isTaskProcess(pid) {
                // Dead already (a descendant of an orphan killed before, most often): reaped
                // without a look at /proc (a tree of a thousand came back as as many zombies).
                guard budget > 0 else { return true }
                var status: Int32 = 0
                budget -= 1
                let reaped = waitpid(pid, &status, WNOHANG)
                if killedDescendants.contains(pid) {
                    // Killed with its orphan: reaped once dead (or by a later sweep). Killed again
                    // all the same: a pid the set kept can be a new process's.
                    sawKilled = true
                    if reaped == pid || (reaped < 0 && errno == ECHILD) {
                        killedDescendants.remove(pid)
                    } else {
                        Glibc.kill(pid, SIGKILL)
                        dying = true
                    }
                    continue
                }
                if reaped == pid { continue }
                let name = ProcStat.commandName(of: pid)
                // Its descendants first, each with SIGKILL pending before any of them learns of
                // a parent's death: one that forks a successor at that (a parent-death signal)
                // would otherwise start another orphan for every one killed, for ever.
                let descendants = Self.descendants(of: pid, budget: &budget)
                // The reaper of a worker whose death this loop has not handled yet (it is named
                // before its worker can say ready): ended as the others, not waited for. A real
                // one forks nothing; one with children only took the name.
                if name == Self.exitReaperName, descendants.isEmpty {
                    reapers.insert(pid)
                    continue
                }
                for descendant in descendants { Glibc.kill(descendant, SIGKILL) }
                killedDescendants.formUnion(descendants)
                orphans[pid] = (name, !ProcStat.isDying(pid), descendants.count)
                Glibc.kill(pid, SIGKILL)
                found += 1
            }
            return dying
        }
        // None left among the children: those not seen were reaped by their own parents.
        if !sawKilled, !deferred { killedDescendants.removeAll() }
        return (found, deferred)
    }

    /// Reaps the orphans killed; one a debugger holds is set aside.
    private func reapOrphans() {
        for (pid, orphan) in orphans {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) {
                orphans[pid] = nil
                if orphan.told {
                    let started = orphan.descendants == 0 ? "" : " and the \(orphan.descendants) process\(orphan.descendants == 1 ? "" : "es") it started"
                    logger.notice("killed pid \(pid) (\(orphan.name))\(started), left behind by a dead worker")
                }
            } else if reaped == 0, let tracer = Self.debuggerHoldingDead(pid) {
                orphans[pid] = nil
                heldByDebugger.insert(pid)
                logger.notice("pid \(pid) (\(orphan.name)) is dead, but a debugger (thread \(tracer)) holds it: it is reaped once the debugger lets go")
            }
        }
    }

    /// Reaps the dead children a debugger held and has let go; looks again in a second while
    /// one is held (nothing else may sweep again soon).
    private func reapReleased() {
        for pid in heldByDebugger {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) { heldByDebugger.remove(pid) }
        }
        guard !heldByDebugger.isEmpty, !debuggerCheckScheduled else { return }
        debuggerCheckScheduled = true
        loop.schedule(after: 1) { [unowned self] in
            debuggerCheckScheduled = false
            sweep()
        }
    }

    /// Reaps the dead workers' reapers that have ended (no kill, no teardown to wait for).
    private func reapEndedReapers() {
        for pid in reapers {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) { reapers.remove(pid) }
        }
    }

    /// Kills and reaps the exit reapers of dead workers. Only a child of this process is
    /// killed (a supervisor that is no subreaper never gets its workers' reapers, which then
    /// end on their own): a pid that is a child cannot be reused before it is reaped. Returns
    /// whether one killed is not reaped yet.
    private func endReapers() -> Bool {
        for pid in reapers {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) {
                reapers.remove(pid)
            } else if reaped == 0 {
                Glibc.kill(pid, SIGKILL)
                if waitpid(pid, &status, WNOHANG) == pid { reapers.remove(pid) }
            }
        }
        return !reapers.isEmpty
    }

    /// The tracer of `pid` when `pid` is a zombie that a debugger holds (its parent cannot reap
    /// it before the tracer does), else nil.
    package static func debuggerHoldingDead(_ pid: pid_t) -> pid_t? {
        guard ProcStat.read(pid)?.state == "Z", let tracer = ProcStat.status(pid, "TracerPid").flatMap({ pid_t($0) }), tracer > 0 else { return nil }
        return tracer
    }

    /// The command name a worker's exit reaper gives itself (exit_reaper.c).
    static let exitReaperName = "agent-exit"

    /// The supervisor's children, from /proc/self/task/*/children.
    package nonisolated static func children() -> [Int32] {
        var unbounded = Int.max
        return children(of: getpid(), budget: &unbounded)
    }

    /// The children of `pid`, from /proc/PID/task/*/children (each thread lists those it
    /// forked), a file read taken from `budget` each (read in C: Foundation's listing of a
    /// folder was most of a sweep of a thousand processes).
    package nonisolated static func children(of pid: pid_t, budget: inout Int) -> [Int32] {
        var cBudget = Int32(clamping: budget)
        let found = [Int32](unsafeUninitializedCapacity: mostChildren) { buffer, count in
            count = Int(agent_process_children(pid, buffer.baseAddress, Int32(mostChildren), &cBudget))
        }
        budget -= Int(Int32(clamping: budget) - cBudget)
        return found
    }

    /// The most children of one process listed at once.
    nonisolated static let mostChildren = 4_096

    /// The most descendants of one orphan the sweep lists; those beyond are found by later
    /// sweeps, orphans then.
    nonisolated static let mostDescendants = 1_024

    /// The most children one sweep reaps or looks at and /proc/PID/task/TID/children files it
    /// reads (10–20 µs each, on the loop): a tree larger, or a process with more threads, is
    /// killed and reaped over several sweeps, 50 ms apart.
    static let readsPerSweep = 256

    /// `pid`'s children, their children and so on, parents before their children; each
    /// children file read is taken from `budget`.
    package nonisolated static func descendants(of pid: pid_t, budget: inout Int) -> [pid_t] {
        var found: [pid_t] = []
        var next = 0
        var parent = pid
        while found.count < mostDescendants, budget > 0 {
            found += children(of: parent, budget: &budget).prefix(mostDescendants - found.count)
            guard next < found.count else { break }
            parent = found[next]
            next += 1
        }
        return found
    }
}
