import AgentCore
import Foundation

/// The agent's cgroup (v2) as its workers and runs use it:
///
/// ```
/// <the supervisor's cgroup>/agent-<hash>/     no process of its own (so it may hand controllers down)
///                              workers/       the fork server and every worker
///                              run-<id>-<n>/  one per attempt of a command task (``RunCgroup``)
/// ```
///
/// Processes start in their leaf (clone3 with `CLONE_INTO_CGROUP`), so that what they fork
/// at once is there too. The `memory` and `cpu` controllers are handed down to the runs when the
/// agent's cgroup has them (its parent lists them in `cgroup.subtree_control`); a task's `limits`
/// are enforced there, else in cgroup v1 hierarchies that have them (``CgroupV1Limits``).
package final class AgentCgroup {
    /// The agent's cgroup.
    package let path: String
    /// Its `workers` leaf, and that folder open (for clone3).
    package let workersPath: String
    package let workersFD: Int32
    /// The controllers among `memory` and `cpu` that the runs' cgroups have.
    package let controllers: Set<String>
    /// Why a controller is missing (nil when both are there), for messages.
    package let missingControllers: String?

    /// The limits a task may set, and the controller each needs.
    package static let limitControllers = ["memory", "cpu"]

    private init(path: String, workersFD: Int32, controllers: Set<String>, missing: String?) {
        self.path = path
        workersPath = path + "/" + WorkerCgroup.workersName
        self.workersFD = workersFD
        self.controllers = controllers
        missingControllers = missing
    }

    deinit { close(workersFD) }

    /// Sets up the (new, empty) agent cgroup at `path`: its workers leaf, and the controllers
    /// its runs get.
    package static func make(at path: String) -> Result<AgentCgroup, CgroupLocation.Unavailable> {
        let workers = path + "/" + WorkerCgroup.workersName
        let fd = mkdir(workers, 0o755) == 0 || errno == EEXIST ? open(workers, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            WorkerCgroup.removeTree(path)
            return .failure(CgroupLocation.Unavailable(description: "cannot make the cgroup \(workers): \(reason)"))
        }
        let (enabled, missing) = handDownControllers(path)
        return .success(AgentCgroup(path: path, workersFD: fd, controllers: enabled, missing: missing))
    }

    /// Enables `memory` and `cpu` for the children of `path` where `path` has them; returns
    /// those enabled and, when one is missing, why.
    private static func handDownControllers(_ path: String) -> (Set<String>, String?) {
        let available = Set(read(path + "/cgroup.controllers").split(separator: " ").map(String.init))
        var enabled: Set<String> = []
        var failures: [String] = []
        for controller in limitControllers where available.contains(controller) {
            let code = WorkerCgroup.write("+\(controller)", to: path + "/cgroup.subtree_control")
            if code == 0 {
                enabled.insert(controller)
            } else {
                failures.append("+\(controller) in \(path)/cgroup.subtree_control: \(String(cString: strerror(code)))")
            }
        }
        let missing = limitControllers.filter { !enabled.contains($0) }
        guard !missing.isEmpty else { return (enabled, nil) }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let reason = failures.isEmpty
            ? "\(path)/cgroup.controllers lists \(available.isEmpty ? "none" : available.sorted().joined(separator: " ")): the supervisor's cgroup \(parent) does not hand \(missing.joined(separator: " and ")) down (its cgroup.subtree_control)"
            : "cannot enable \(failures.joined(separator: "; "))"
        return (enabled, "no \(missing.joined(separator: " and ")) controller for the runs' cgroups: \(reason)")
    }

    /// What the agent says at its start about limits: which cgroup version enforces each, or
    /// why none can.
    package func limitsLine(v1: CgroupV1Limits?) -> String {
        var enforced: [String] = []
        var unenforced: [String] = []
        for controller in Self.limitControllers {
            if controllers.contains(controller) {
                enforced.append("\(controller) by cgroup v2 (\(controller).max in each run's cgroup)")
            } else if let folder = v1?.folders[controller] {
                enforced.append("\(controller) by cgroup v1 (a group of each run in \(folder))")
            } else {
                unenforced.append(controller + (v1?.missing[controller].map { " (cgroup v1: \($0))" } ?? ""))
            }
        }
        var line = "task limits (\"limits\": memory, cpu)"
        if !enforced.isEmpty { line += " are enforced: " + enforced.joined(separator: ", ") }
        if !unenforced.isEmpty {
            line += (enforced.isEmpty ? "" : ";") + " cannot be enforced for \(unenforced.joined(separator: ", ")): \(missingControllers ?? "no controller"); a run of a task with such limits fails instead of running without them"
        }
        return line
    }

    private static func read(_ file: String) -> String {
        (ProcFile.read(file) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
