import AgentModuleKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads host statistics from /proc (CPU, memory, load) and the disk usage of a path, and
/// emits them as a `host_stats` event every interval.
struct HostStats: Datasource {
    struct Settings: SettingsDeclaration {
        @Setting(minimum: 0.1, description: "Seconds between two samples.")
        var interval: Double = 5
        @Setting(minLength: 1, description: "A path on the filesystem whose usage is reported.")
        var diskPath: String = "/"
    }

    /// The payload of a `host_stats` event.
    struct Sample: Codable, Sendable, Equatable {
        var cpu_percent: Double
        var memory_percent: Double
        var memory_available_mb: Double
        var load1: Double
        var load5: Double
        var load15: Double
        var disk_percent: Double
        var disk_path: String
    }

    static let typeName = "host_stats"
    static let description = "Emits `host_stats` events: CPU, memory and disk usage in percent and the load averages, read from /proc."

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        var previous = ProcReader.cpuTimes()
        try await context.sleep(seconds: min(settings.interval, 1))
        while true {
            let current = ProcReader.cpuTimes()
            let memory = ProcReader.memory()
            let load = ProcReader.loadAverages()
            let sample = Sample(
                cpu_percent: ProcReader.round(ProcReader.cpuPercent(from: previous, to: current)),
                memory_percent: ProcReader.round(memory.usedPercent),
                memory_available_mb: ProcReader.round(memory.availableMB),
                load1: load.0, load5: load.1, load15: load.2,
                disk_percent: ProcReader.round(ProcReader.diskPercent(path: settings.diskPath)),
                disk_path: settings.diskPath
            )
            previous = current
            try context.emit("host_stats", payload: sample)
            try await context.sleep(seconds: settings.interval)
        }
    }
}

/// Parsers for the /proc files the datasource reads.
enum ProcReader {
    struct CPUTimes: Equatable { var busy: UInt64; var total: UInt64 }

    static func cpuTimes(stat: String? = try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) -> CPUTimes {
        guard let line = stat?.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else {
            return CPUTimes(busy: 0, total: 0)
        }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        let total = fields.reduce(0, +)
        // idle and iowait are the 4th and 5th fields.
        let idle = (fields.count > 3 ? fields[3] : 0) + (fields.count > 4 ? fields[4] : 0)
        return CPUTimes(busy: total - idle, total: total)
    }

    static func cpuPercent(from a: CPUTimes, to b: CPUTimes) -> Double {
        guard b.total > a.total else { return 0 }
        return Double(b.busy &- a.busy) / Double(b.total - a.total) * 100
    }

    static func memory(meminfo: String? = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) -> (usedPercent: Double, availableMB: Double) {
        var values: [String: Double] = [:]
        for line in meminfo?.split(separator: "\n") ?? [] {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            values[String(parts[0])] = Double(parts[1].split(separator: " ").first ?? "")
        }
        guard let total = values["MemTotal"], total > 0 else { return (0, 0) }
        let available = values["MemAvailable"] ?? values["MemFree"] ?? 0
        return ((total - available) / total * 100, available / 1024)
    }

    static func loadAverages(text: String? = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) -> (Double, Double, Double) {
        let f = (text ?? "").split(separator: " ").prefix(3).compactMap { Double($0) }
        return f.count == 3 ? (f[0], f[1], f[2]) : (0, 0, 0)
    }

    static func diskPercent(path: String) -> Double {
        var s = statvfs()
        guard statvfs(path, &s) == 0, s.f_blocks > 0 else { return 0 }
        let used = Double(s.f_blocks - s.f_bfree)
        let usable = used + Double(s.f_bavail)
        return usable > 0 ? used / usable * 100 : 0
    }

    static func round(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
