import AgentCore
import Foundation
import Logging

/// Where the supervisor's cgroup (v2) is, and the agent's cgroup made under it.
package enum CgroupLocation {
    /// Why the agent runs without a cgroup of its own.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// Makes (afresh) the agent's cgroup under the supervisor's: `agent-<hash of the run
    /// folder>`, so that a later run of the same agent finds a leftover one. Fails when
    /// `AGENT_CGROUPS=0`, when there is no cgroup2 hierarchy, no `cgroup.kill` (before Linux
    /// 5.14) or no right to make a cgroup there.
    package static func makeAgentCgroup(runDirectory: String, environment: [String: String], logger: Logger) -> Result<String, Unavailable> {
        if SupervisorConfiguration.switchedOff("AGENT_CGROUPS", in: environment) {
            return .failure(Unavailable(description: "AGENT_CGROUPS=\(environment["AGENT_CGROUPS"] ?? "0")"))
        }
        guard let own = ownCgroupDirectory() else { return .failure(Unavailable(description: "no cgroup v2 hierarchy is mounted for this process")) }
        let path = own + "/agent-" + hash(runDirectory)
        if mkdir(path, 0o755) != 0 {
            guard errno == EEXIST else {
                return .failure(Unavailable(description: "cannot make a cgroup in \(own): \(String(cString: strerror(errno)))"))
            }
            // A leftover of a run whose record was lost: empty it and start afresh.
            let killed = WorkerContainment.empty(cgroup: path, timeout: 2)
            if !killed.isEmpty { logger.notice("killed \(WorkerContainment.describe(killed)), left in \(path) by an earlier run") }
            guard WorkerCgroup.removeTree(path) == 0, mkdir(path, 0o755) == 0 else {
                return .failure(Unavailable(description: "cannot make the cgroup \(path) afresh: \(String(cString: strerror(errno)))"))
            }
        }
        // Only a non-root cgroup has cgroup.kill: look in the new one.
        guard access(path + "/cgroup.kill", F_OK) == 0 else {
            rmdir(path)
            return .failure(Unavailable(description: "the kernel has no cgroup.kill (Linux 5.14 or later has it)"))
        }
        guard access(path + "/cgroup.procs", W_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(path)
            return .failure(Unavailable(description: "cannot move processes into \(path): \(reason)"))
        }
        return .success(path)
    }

    /// The cgroup an agent of `runDirectory` runs its workers in (whether or not it exists):
    /// nil without a cgroup v2 hierarchy.
    package static func agentCgroupPath(runDirectory: String) -> String? {
        ownCgroupDirectory().map { $0 + "/agent-" + hash(runDirectory) }
    }

    /// A path recorded in a run folder names an agent's cgroup: a folder `agent-…` in a cgroup2
    /// hierarchy (so that a tampered record cannot make the next start write elsewhere).
    package static func isAgentCgroup(_ path: String) -> Bool {
        // Components split at the scalar `/`, as the kernel does: a `/` followed by a combining
        // mark is one `Character`, so `../\u{301}x` would hold no `..` component.
        guard path.utf8.first == UInt8(ascii: "/"), !path.unicodeScalars.split(separator: "/").contains(where: { $0.elementsEqual("..".unicodeScalars) }),
              URL(fileURLWithPath: path).lastPathComponent.hasPrefix("agent-") else { return false }
        return mounts().contains { path.utf8.starts(with: ($0.mountPoint + "/").utf8) }
    }

    /// The folder of the calling process's cgroup: its `0::` line in /proc/self/cgroup, under
    /// the cgroup2 mount (from /proc/self/mountinfo) whose root holds it.
    package static func ownCgroupDirectory() -> String? {
        guard let text = ProcFile.read("/proc/self/cgroup"),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let relative = String(line.dropFirst(3))
        for mount in mounts() {
            let root = mount.root == "/" ? "" : mount.root
            guard relative == root || relative.hasPrefix(root + "/") || root.isEmpty else { continue }
            let rest = relative.dropFirst(root.count)
            let path = mount.mountPoint + (rest == "/" ? "" : rest)
            if access(path + "/cgroup.procs", F_OK) == 0 { return path }
        }
        return nil
    }

    /// cgroup2 mounts: where each is mounted and which folder of the hierarchy it shows.
    package static func mounts() -> [(mountPoint: String, root: String)] {
        guard let text = ProcFile.read("/proc/self/mountinfo") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            // id parent major:minor root mount-point options [optional…] - type source options
            let halves = line.components(separatedBy: " - ")
            guard halves.count >= 2, halves[1].hasPrefix("cgroup2 ") else { return nil }
            let fields = halves[0].split(separator: " ")
            guard fields.count >= 5 else { return nil }
            return (unescape(String(fields[4])), unescape(String(fields[3])))
        }
    }

    /// mountinfo writes space, tab, newline and backslash as octal escapes (`\040`).
    private static func unescape(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "\\"), input.count >= 3, let value = UInt8(String(decoding: input.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                input = input.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// FNV-1a of the run folder's path, 16 hex digits.
    package static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
