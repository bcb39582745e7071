import Foundation

/// The machine and build a report comes from.
struct MachineInfo: Codable {
    var date: String
    var commit: String
    var cores: Int
    /// The processor's model name (/proc/cpuinfo); absent in reports from before it was kept.
    var model: String?
    var memory: String
    var kernel: String
    var swift: String
    var build: String
    /// How busy the machine was just before the figures (see ``MachineLoad``).
    var load: MachineLoad?
    /// How an idle core waits: cpuidle's driver and governor, and a VM guest's halt polling.
    /// On a VM a halted core that another wakes costs tens of µs, the latency figures' tail
    /// (benchmarks/HISTORY.md, stop 61). Absent in reports from before it was kept.
    var idle: String?

    static func current(packageDirectory: String?) -> MachineInfo {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let memoryKB = ProcFiles.field("MemTotal:", in: "/proc/meminfo") ?? 0
        var commit = "unknown"
        if let packageDirectory,
           let head = Command.output("/usr/bin/env", ["git", "-C", packageDirectory, "rev-parse", "--short", "HEAD"]) {
            let dirty = Command.output("/usr/bin/env", ["git", "-C", packageDirectory, "status", "--porcelain", "--untracked-files=no"]) ?? ""
            commit = head + (dirty.isEmpty ? "" : " (with uncommitted changes)")
        }
        let swift = Command.output("/usr/bin/env", ["swift", "--version"])?
            .split(separator: "\n").first.map { $0.replacingOccurrences(of: "Swift version ", with: "Swift ") } ?? "Swift (version unknown)"
        #if DEBUG
        let build = "debug (figures are not meaningful)"
        #else
        let build = "release"
        #endif
        return MachineInfo(
            date: formatter.string(from: Date()), commit: commit,
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), model: processorModel(),
            memory: String(format: "%.1f GiB RAM", Double(memoryKB) / 1024 / 1024), kernel: kernel,
            swift: swift.components(separatedBy: " (").first ?? swift, build: build, load: nil, idle: idleState())
    }
}

extension MachineInfo {
    /// "cpuidle haltpoll, guest halt polling off" and the like, from /sys; nil where the
    /// kernel says nothing of it.
    static func idleState() -> String? {
        func value(_ path: String) -> String? { ProcFiles.read(path)?.trimmingCharacters(in: .whitespacesAndNewlines) }
        let cpuidle = "/sys/devices/system/cpu/cpuidle/"
        guard let driver = value(cpuidle + "current_driver") else { return nil }
        var text = "cpuidle \(driver)"
        if let governor = value(cpuidle + "current_governor") ?? value(cpuidle + "current_governor_ro"), governor != driver {
            text += " (\(governor) governor)"
        }
        if let poll = value("/sys/module/haltpoll/parameters/guest_halt_poll_ns") {
            text += ", guest halt polling " + (poll == "0" ? "off" : "up to \(poll) ns")
        }
        return text
    }

    /// The first `model name` of /proc/cpuinfo ("Intel(R) Xeon(R) …"), or nil where there is none.
    static func processorModel() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line?.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

/// Runs short commands for their output.
enum Command {
    /// The trimmed standard output of a command that exited 0, or nil.
    static func output(_ path: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
