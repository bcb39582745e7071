import AgentCore
import AgentLoop
import AgentSupervision
import Foundation

/// The dead daemons of runs still running. A daemon leaves its run's process group and, once
/// the parent that started it ends, becomes the agent's child (the supervisor is a child
/// subreaper). If it dies while its run goes on, nothing else reaps it: it is no longer a
/// member of its run's cgroup, which the run's end looks at. It would stay a zombie, a pid
/// each, until the agent stops.
extension CommandTaskRunner {
    /// Most of the agent's children looked at in one turn (a file read each).
    static let childrenLookedAtPerTurn = 512

    /// The agent got SIGCHLD: a child ended, or one it inherited did. Looks for the runs'
    /// dead daemons a moment later, once per 50 ms at most however many runs end meanwhile.
    package func childrenChanged() {
        guard !runs.isEmpty, !daemonLookScheduled else { return }
        daemonLookScheduled = true
        loop.schedule(after: 0.05) { [weak self] in
            guard let self else { return }
            daemonLookScheduled = false
            reapDeadDaemons()
        }
    }

    /// Reaps the agent's dead children that belong to a running run: in its cgroup (a zombie
    /// still names the cgroup it died in), or without cgroups in its process group. Only
    /// those: a program that embeds the supervisor may wait for children of its own. The
    /// programs themselves are left to their runs, which read how they ended.
    func reapDeadDaemons() {
        let programs = Set(runs.values.map(\.pid).filter { $0 > 0 })
        let groups = Set(runs.values.filter { $0.cgroup == nil }.map(\.pid).filter { $0 > 0 })
        let cgroups = runs.values.compactMap { $0.cgroup.map { "/" + ($0.path as NSString).lastPathComponent } }
        guard !groups.isEmpty || !cgroups.isEmpty else { return }
        var looked = 0
        for pid in OrphanSweeper.children() where !programs.contains(pid) {
            guard looked < Self.childrenLookedAtPerTurn else {
                // Many children: the rest at the next look.
                childrenChanged()
                return
            }
            looked += 1
            guard let stat = ProcStat.read(pid), stat.state == "Z" else { continue }
            if groups.contains(stat.group) || Self.diedIn(cgroups, pid: pid) {
                var status: Int32 = 0
                _ = waitpid(pid, &status, WNOHANG)
            }
        }
    }

    /// Whether `pid`'s cgroup (v2) is one of `cgroups` (a `/name`) or inside one.
    private static func diedIn(_ cgroups: [String], pid: pid_t) -> Bool {
        guard !cgroups.isEmpty, let text = ProcFile.read("/proc/\(pid)/cgroup", limit: 64 << 10),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return false }
        let path = line.dropFirst(3)
        return cgroups.contains { path.hasSuffix($0) || path.contains($0 + "/") }
    }
}
