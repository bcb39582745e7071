import AgentCore
import AgentSupervision
import CAgentSystem
import Foundation
import Logging

extension Supervisor {
    /// The supervisor is a child subreaper: what a worker started and left behind (even in
    /// its own session, out of reach of the process-group kill) becomes the supervisor's child
    /// when the worker dies, and is killed here.
    func becomeSubreaper() {
        if agent_set_child_subreaper() == 0 {
            isSubreaper = true
        } else {
            logger.warning("cannot become a child subreaper (\(String(cString: strerror(errno)))); children that workers move to another session may outlive them")
        }
    }

    /// Kills and reaps children of the supervisor that are not workers (nor `command` tasks'
    /// programs): orphans of dead workers.
    /// Runs after a worker died (off the restart path) and retries until they are reaped.
    func sweepOrphans() {
        // Only a subreaper's other children are orphans of its workers: a supervisor embedded
        // in another program (a test, a tool) must leave that program's children alone.
        guard isSubreaper else { return }
        var workers = Set((processes + retiring).map(\.pid) + spares.values.map(\.pid))
        if let forkServer { workers.insert(forkServer.pid) }
        var found = 0
        // As a subreaper the supervisor's children are its workers and their orphans (and
        // the describe workers of a settings check): the kernel lists them per thread, which
        // is far cheaper than scanning /proc.
        DescribeWorkers.whileListed { describing in
            for pid in Self.children() where !workers.contains(pid) && !describing.contains(pid) && orphans[pid] == nil
                && !work.isTaskCommandProcess(pid) {
                orphans[pid] = ProcStat.commandName(of: pid)
                Glibc.kill(pid, SIGKILL)
                found += 1
            }
        }
        for (pid, name) in orphans {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) {
                orphans[pid] = nil
                logger.notice("killed pid \(pid) (\(name)), left behind by a dead worker")
            }
        }
        if !orphans.isEmpty || found > 0 {
            loop.schedule(after: 0.05) { [unowned self] in sweepOrphans() }
        }
    }

    /// The supervisor's children, from /proc/self/task/*/children.
    static func children() -> [Int32] {
        var result: [Int32] = []
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let text = try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8) else { continue }
            result += text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return result
    }
}
