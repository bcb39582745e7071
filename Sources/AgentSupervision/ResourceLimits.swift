import JSONSchema

/// A command task's `"limits"`: what each of its runs may use, enforced in the run's cgroup
/// (`memory.max`, `cpu.max`) where the agent's cgroup has the controllers, else in groups of
/// the run in the cgroup v1 hierarchies that have them (``CgroupV1Limits``).
///
/// ```json
/// "limits": {"memory": "512M", "cpu": 0.5}
/// ```
public struct ResourceLimits: Equatable, Sendable {
    /// Bytes of memory the run's processes may use together (page cache included), else they
    /// are reclaimed and, past it, killed by the kernel's OOM killer.
    public var memoryBytes: Int?
    /// CPUs the run's processes may use together (0.5: half of one, 2: two).
    public var cpus: Double?

    /// `cpu.max`'s period: the quota is `cpus` × this, in microseconds.
    package static let cpuPeriod = 100_000
    /// The smallest limits: the kernel's floor for a quota is 1 ms a period; a run below a MiB
    /// would be killed before its program starts.
    package static let leastCPUs = 0.01
    package static let mostCPUs = 4096.0
    package static let leastMemory = 1 << 20

    public init(memoryBytes: Int? = nil, cpus: Double? = nil) {
        self.memoryBytes = memoryBytes
        self.cpus = cpus
    }

    /// The controllers the limits need.
    package var controllers: [String] {
        (memoryBytes != nil ? ["memory"] : []) + (cpus != nil ? ["cpu"] : [])
    }

    /// What the cgroup's files get: `memory.max` and `cpu.max`.
    package var cgroupFiles: [(file: String, value: String)] {
        var files: [(String, String)] = []
        if let memoryBytes { files.append(("memory.max", String(memoryBytes))) }
        if let quota = cpuQuota { files.append(("cpu.max", "\(quota) \(Self.cpuPeriod)")) }
        return files
    }

    /// What a cgroup v1 group of `controller` gets, in this order: `memory.limit_in_bytes` and
    /// `memory.memsw.limit_in_bytes` (where the kernel accounts swap: no swapping past the
    /// limit); `cpu.cfs_period_us` and `cpu.cfs_quota_us`.
    package func cgroupV1Files(_ controller: String) -> [(file: String, value: String)] {
        switch controller {
        case "memory":
            return memoryBytes.map { [("memory.limit_in_bytes", String($0)), ("memory.memsw.limit_in_bytes", String($0))] } ?? []
        case "cpu":
            return cpuQuota.map { [("cpu.cfs_period_us", String(Self.cpuPeriod)), ("cpu.cfs_quota_us", String($0))] } ?? []
        default: return []
        }
    }

    /// The CPU time a period allows, in microseconds (the kernel's floor is 1 ms).
    private var cpuQuota: Int? {
        cpus.map { max(Int(($0 * Double(Self.cpuPeriod)).rounded()), 1_000) }
    }

    /// The schema of `"limits"` (part of the tasks' schema).
    package static let schema: JSONValue = [
        "description": "Command tasks: what each run (its whole process tree) may use, enforced in the run's cgroup (v2 memory.max, cpu.max; else v1 memory.limit_in_bytes, cpu.cfs_quota_us). Where neither cgroup v2 nor v1 has the memory or cpu controller (the agent says so at its start), a run of a task with limits fails rather than run without them.",
        "type": "object", "additionalProperties": false, "minProperties": 1,
        "properties": [
            "memory": ["type": ["integer", "string"],
                       "description": "Bytes, or a number with a unit K, M, G or T (powers of 1024): \"512M\". At least 1M."],
            "cpu": ["type": "number", "minimum": .number(JSONNumber(leastCPUs)), "maximum": .number(JSONNumber(mostCPUs)),
                    "description": "CPUs: 0.5 is half of one CPU's time, 2 two CPUs' time."],
        ],
    ]

    /// Reads `"limits"` (already checked by the schema); problems at their pointers.
    package static func read(_ value: JSONValue?, pointer: String) -> (limits: ResourceLimits?, problems: [(pointer: String, message: String)]) {
        guard let object = value?.objectValue else { return (nil, []) }
        var limits = ResourceLimits()
        var problems: [(pointer: String, message: String)] = []
        switch object["memory"] {
        case .number(let number)?:
            if let bytes = number.intValue, bytes >= leastMemory {
                limits.memoryBytes = bytes
            } else {
                problems.append((pointer + "/memory", "expected a whole number of bytes from \(leastMemory) (1M) up, or a string like \"512M\", found \(number)"))
            }
        case .string(let text)?:
            switch memory(text) {
            case .success(let bytes): limits.memoryBytes = bytes
            case .failure(let problem): problems.append((pointer + "/memory", problem.message))
            }
        default: break
        }
        if let cpus = object["cpu"]?.numberValue?.doubleValue, cpus.isFinite {
            limits.cpus = min(max(cpus, leastCPUs), mostCPUs)
        }
        return (limits.controllers.isEmpty ? nil : limits, problems)
    }

    package struct Problem: Error {
        package var message: String
    }

    /// `"512M"`: a whole number and an optional unit (K, M, G, T; powers of 1024).
    package static func memory(_ text: String) -> Result<Int, Problem> {
        let units: [Character: Int] = ["K": 10, "M": 20, "G": 30, "T": 40]
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        var shift = 0
        if let last = digits.last, let unit = units[Character(last.uppercased())] {
            shift = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let count = Int(digits) else {
            return .failure(Problem(message: "expected a number of bytes with an optional unit K, M, G or T (\"512M\"), found \"\(text)\""))
        }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: 1 << shift)
        guard !overflow, bytes >= leastMemory else {
            return .failure(Problem(message: "expected at least 1M and at most 8E of memory, found \"\(text)\""))
        }
        return .success(bytes)
    }
}
