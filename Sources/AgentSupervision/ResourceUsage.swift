import JSONSchema

/// What a run's processes used together, read from its cgroup when the run ended (`usage` in
/// the run's record). Without a cgroup nothing is measured.
public struct ResourceUsage: Equatable, Sendable {
    /// CPU time of all its processes (`usage_usec` of the cgroup's cpu.stat, always there).
    public var cpuSeconds: Double
    /// The most memory they used at once (`memory.peak`: only with the memory controller).
    public var memoryPeakBytes: Int?

    public init(cpuSeconds: Double, memoryPeakBytes: Int? = nil) {
        self.cpuSeconds = cpuSeconds
        self.memoryPeakBytes = memoryPeakBytes
    }

    package var json: JSONValue {
        var object: JSONObject = ["cpu_seconds": .number(JSONNumber((cpuSeconds * 1e6).rounded() / 1e6))]
        if let memoryPeakBytes { object["memory_peak_bytes"] = .number(JSONNumber(memoryPeakBytes)) }
        return .object(object)
    }

    package init?(json: JSONValue?) {
        guard let seconds = json?["cpu_seconds"]?.numberValue?.doubleValue else { return nil }
        cpuSeconds = seconds
        memoryPeakBytes = json?["memory_peak_bytes"]?.numberValue?.intValue
    }

    /// The schema of `usage` in a run's answer.
    package static let schema: JSONValue = [
        "description": "What the last attempt's processes used together, from its cgroup (command runs; absent without cgroups): CPU seconds, and the peak memory where the memory controller is available.",
        "type": "object", "required": ["cpu_seconds"],
        "properties": ["cpu_seconds": ["type": "number"], "memory_peak_bytes": ["type": "integer"]],
    ]
}
