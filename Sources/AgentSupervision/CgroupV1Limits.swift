import AgentCore
import Foundation
import Logging

/// Where the `memory` and `cpu` controllers are only in cgroup v1 hierarchies (cgroup2 mounted
/// without them, as on many hosts still): the agent's folder in each of those hierarchies,
/// below the supervisor's own cgroup there (`agent-<hash>`, as in v2). A run of a task with
/// `limits` that the v2 cgroup cannot enforce gets a group in it (`run-<id>-<n>`) holding only
/// its limits; its command joins it before exec. The run's v2 cgroup (``RunCgroup``) stays the
/// one that kills, tells emptiness and contains the tree.
///
/// `AGENT_CGROUP_V1=0` turns it off.
package final class CgroupV1Limits {
    /// Each controller found → the agent's folder in its hierarchy.
    package let folders: [String: String]
    /// Each controller not found → why.
    package let missing: [String: String]

    private init(folders: [String: String], missing: [String: String]) {
        self.folders = folders
        self.missing = missing
    }

    /// Finds the v1 hierarchies of `controllers` and makes the agent's folder in each, emptying
    /// and removing what an earlier run of the same agent left there.
    package static func make(controllers: [String], runDirectory: String, environment: [String: String], logger: Logger) -> CgroupV1Limits {
        if SupervisorConfiguration.switchedOff("AGENT_CGROUP_V1", in: environment) {
            let reason = "AGENT_CGROUP_V1=\(environment["AGENT_CGROUP_V1"] ?? "0")"
            return CgroupV1Limits(folders: [:], missing: Dictionary(uniqueKeysWithValues: controllers.map { ($0, reason) }))
        }
        var folders: [String: String] = [:]
        var missing: [String: String] = [:]
        let name = "agent-" + CgroupLocation.hash(runDirectory)
        for controller in controllers {
            guard let own = ownFolder(controller) else {
                missing[controller] = "no cgroup v1 hierarchy with \(controller) is mounted for this process"
                continue
            }
            let path = own + "/" + name
            let left = removeLeftovers(path)
            if !left.isEmpty { logger.notice("killed pid \(left.map(String.init).joined(separator: ", ")), left in \(path) by an earlier run") }
            guard mkdir(path, 0o755) == 0 || errno == EEXIST, access(path + "/cgroup.procs", W_OK) == 0 else {
                missing[controller] = "cannot make the cgroup \(path): \(String(cString: strerror(errno)))"
                continue
            }
            folders[controller] = path
        }
        return CgroupV1Limits(folders: folders, missing: missing)
    }

    /// A group of a run in one hierarchy: its folder and its `cgroup.procs`, open for the
    /// command to join before exec.
    package struct Group {
        package let path: String
        package let join: Int32
    }

    /// Makes the run's groups for `controllers` (all of them in ``folders``) with `limits`
    /// written. A leftover of the same name is emptied and made afresh.
    package func makeGroups(name: String, controllers: [String], limits: ResourceLimits) -> Result<[Group], RunCgroup.Failure> {
        var groups: [Group] = []
        // Hierarchies mounted together (cpu,memory) share one folder: one group for both.
        for (folder, together) in Dictionary(grouping: controllers, by: { folders[$0] ?? "" }).sorted(by: { $0.key < $1.key }) {
            switch makeGroup(folder + "/" + name, files: together.sorted().flatMap(limits.cgroupV1Files)) {
            case .success(let group): groups.append(group)
            case .failure(let failure):
                Self.remove(groups)
                return .failure(failure)
            }
        }
        return .success(groups)
    }

    private func makeGroup(_ path: String, files: [(file: String, value: String)]) -> Result<Group, RunCgroup.Failure> {
        if mkdir(path, 0o755) != 0 {
            guard errno == EEXIST else { return .failure(.init(message: "cannot make the run's cgroup \(path): \(String(cString: strerror(errno)))")) }
            Self.removeLeftovers(path)
            guard mkdir(path, 0o755) == 0 else { return .failure(.init(message: "cannot make the run's cgroup \(path) afresh: \(String(cString: strerror(errno)))")) }
        }
        for (file, value) in files where file != "memory.memsw.limit_in_bytes" || access(path + "/" + file, F_OK) == 0 {
            let code = WorkerCgroup.write(value, to: path + "/" + file)
            if code != 0 {
                rmdir(path)
                return .failure(.init(message: "cannot set \(file) to \(value) in \(path): \(String(cString: strerror(code)))"))
            }
        }
        let join = open(path + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        guard join >= 0 else {
            let code = errno
            rmdir(path)
            return .failure(.init(message: "cannot open \(path)/cgroup.procs: \(String(cString: strerror(code)))"))
        }
        return .success(Group(path: path, join: join))
    }

    /// Closes and removes the (empty) groups; returns the first errno, 0 when done.
    @discardableResult
    package static func remove(_ groups: [Group]) -> Int32 {
        var first: Int32 = 0
        for group in groups {
            close(group.join)
            if rmdir(group.path) != 0, errno != ENOENT, first == 0 { first = errno }
        }
        return first
    }

    /// At the agent's stop: removes its folders (the runs' groups are gone with their runs).
    package func finish() {
        for path in folders.values { Self.removeLeftovers(path) }
    }

    /// Kills the processes in the cgroup at `path` and its children (v1 has no cgroup.kill;
    /// a fork may race: again while some are left, up to 2 s) and removes them. Returns the
    /// pids killed.
    @discardableResult
    package static func removeLeftovers(_ path: String) -> [Int32] {
        var killed: [Int32] = []
        let deadline = Date().addingTimeInterval(2)
        while case let members = WorkerCgroup.members(path), !members.isEmpty, Date() < deadline {
            for pid in members where pid != getpid() {
                Glibc.kill(pid, SIGKILL)
                if !killed.contains(pid) { killed.append(pid) }
            }
            usleep(2_000)
        }
        WorkerCgroup.removeTree(path)
        return killed
    }

    /// The folder of this process's cgroup in the v1 hierarchy of `controller`: its line in
    /// /proc/self/cgroup (`4:memory:/a/b`), under the mount of that hierarchy.
    package static func ownFolder(_ controller: String) -> String? {
        guard let text = ProcFile.read("/proc/self/cgroup"),
              let mountinfo = ProcFile.read("/proc/self/mountinfo") else { return nil }
        let lines: [[Substring]] = text.split(separator: "\n").map { $0.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false) }
        guard let own = lines.first(where: { $0.count == 3 && $0[1].split(separator: ",").contains(Substring(controller)) }) else { return nil }
        let relative = String(own[2])
        for line in mountinfo.split(separator: "\n") {
            // id parent major:minor root mount-point options [optional…] - cgroup source super-options
            let halves = line.components(separatedBy: " - ")
            let tail = halves.count >= 2 ? halves[1].split(separator: " ") : []
            let fields = halves[0].split(separator: " ")
            guard tail.count >= 3, tail[0] == "cgroup", tail[2].split(separator: ",").contains(Substring(controller)),
                  fields.count >= 5 else { continue }
            let root = fields[3] == "/" ? "" : String(fields[3])
            guard relative == root || relative.hasPrefix(root + "/") else { continue }
            let rest = relative.dropFirst(root.count)
            let path = String(fields[4]) + (rest == "/" ? "" : rest)
            if access(path + "/cgroup.procs", F_OK) == 0 { return path }
        }
        return nil
    }
}
