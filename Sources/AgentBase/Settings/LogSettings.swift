import AgentCore
import JSONSchema

/// The `log` section of settings.json: how the log file of a detached agent (`agent-control
/// start`, `.agent/log/agent.log`) is rotated. When a line would take it past `max_bytes`,
/// `agent.log` becomes `agent.log.1`, `agent.log.1` becomes `agent.log.2`, … and the oldest
/// beyond `keep` is removed. (Under systemd the log goes to the journal, which rotates it.)
///
/// ```json
/// "log": {"max_bytes": 10485760, "keep": 5}
/// ```
public struct LogSettings: Sendable, Equatable {
    /// The largest the file grows before it is rotated.
    public var maximumBytes = 10 << 20
    /// Rotated files kept (0: the full file is removed).
    public var keep = 5

    public init() {}

    /// The smallest `max_bytes` accepted: a few lines.
    public static let smallestFileBytes = 4096

    /// The schema of the `log` key (part of the host schema).
    public static let schema: JSONValue = [
        "type": "object",
        "additionalProperties": false,
        "description": "The log file of a detached agent (agent-control start): rotated by size; SIGUSR1 reopens it (for logrotate).",
        "properties": [
            "max_bytes": ["type": "integer", "minimum": SettingsBounds.json(smallestFileBytes), "maximum": SettingsBounds.json(SettingsBounds.largestFileBytes),
                          "default": 10485760, "description": "Bytes before the file is rotated (agent.log → agent.log.1 …)."],
            "keep": ["type": "integer", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.mostRotatedFiles), "default": 5,
                     "description": "Rotated files kept: agent.log.1 … agent.log.N."],
        ],
    ]

    /// Reads the section (already checked by the schema); numbers are clamped to the schema's
    /// bounds, so that a value it missed cannot overflow anything.
    public init(_ value: JSONValue?) {
        guard let object = value?.objectValue else { return }
        func integer(_ value: JSONValue?, in range: ClosedRange<Int>) -> Int? {
            guard let number = value?.numberValue else { return nil }
            return min(max(number.intValue ?? Int(saturating: number.doubleValue), range.lowerBound), range.upperBound)
        }
        maximumBytes = integer(object["max_bytes"], in: Self.smallestFileBytes...SettingsBounds.largestFileBytes) ?? maximumBytes
        keep = integer(object["keep"], in: 0...SettingsBounds.mostRotatedFiles) ?? keep
    }
}
