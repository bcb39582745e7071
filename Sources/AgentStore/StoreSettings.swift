import AgentBase
import AgentCore
import Foundation
import JSONSchema

/// The `store` section of settings.json: where the SQLite store is and how long it keeps
/// events.
///
/// ```json
/// "store": {"path": ".agent/data/agent.sqlite", "retention": {"max_age": 604800, "max_events": 1000000, "max_bytes": 4294967296},
///           "queue_limit": 100000, "synchronous": "normal", "commit_interval": 0.005}
/// ```
public struct StoreSettings: Sendable, Equatable {
    public var enabled = true
    /// Relative paths are relative to the agent's folder.
    public var path = ".agent/data/agent.sqlite"
    /// Events older than this many seconds are deleted (nil: kept).
    public var maximumAge: Double? = 7 * 24 * 3600
    /// At most this many events are kept, the oldest deleted first (nil: no limit).
    public var maximumEvents: Int? = 1_000_000
    /// The database's pages in use at most, in bytes: past it the oldest events are deleted
    /// first, so that a flood of events cannot fill the disk (nil: no limit). Runs, memory,
    /// chat and history are never deleted for it.
    public var maximumBytes: Int? = 4 << 30
    /// At most this many finished task runs are kept, and as many finished workflow runs (with
    /// their step logs) and schedule history lines, the oldest deleted first (nil: no limit);
    /// those older than ``maximumAge`` go too. Unfinished runs are never deleted.
    public var maximumRuns: Int? = 100_000
    /// Events waiting to be written; beyond this the oldest waiting ones are dropped (counted).
    public var queueLimit = 100_000
    /// Seconds an event or a history line may wait for others to share its transaction (0: commit at once).
    public var commitInterval = 0.005
    /// `normal`: a committed event survives a crash of the agent; `full`: also a power loss.
    public var synchronous = "normal"

    public init() {}

    /// The schema of the `store` key (part of the host schema).
    public static let schema: JSONValue = [
        "type": "object",
        "additionalProperties": false,
        "description": "The embedded SQLite store: events, process state, run history.",
        "properties": [
            "enabled": ["type": "boolean", "default": true,
                        "description": "false: no store (no event history, run history, process state or shared memory; tasks and schedules keep their runs in memory only)."],
            "path": ["type": "string", "minLength": 1, "default": ".agent/data/agent.sqlite", "description": "The SQLite file, relative to the agent's folder."],
            "retention": [
                "description": "How long events and finished runs are kept; the writer deletes older ones in small chunks: 10 s after the last pass once a hundredth of the smallest count limit has been written, 1 s after it once a hundredth of max_bytes has, else within a tenth of max_age (10 s to 10 min).",
                "type": "object",
                "additionalProperties": false,
                "properties": [
                    "max_age": ["type": ["number", "null"], "exclusiveMinimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestRetention),
                                "default": 604800, "description": "Seconds (at most 100 years); null keeps events forever."],
                    "max_events": ["type": ["integer", "null"], "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.mostStoredEvents), "default": 1000000,
                                   "description": "Events kept at most (the oldest go first); null: no limit."],
                    "max_bytes": ["type": ["integer", "null"], "minimum": SettingsBounds.json(SettingsBounds.smallestStore), "maximum": SettingsBounds.json(SettingsBounds.largestStore),
                                  "default": 4294967296,
                                  "description": "The database's size at most, in bytes (its pages in use, 1 MiB to 1 TiB): past it the oldest events are deleted first, whatever max_events and max_age allow. Runs, memory, chat and history are not deleted for it. null: no limit."],
                    "max_runs": ["type": ["integer", "null"], "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.mostStoredEvents), "default": 100000,
                                 "description": "Finished task runs kept, and as many finished workflow runs (the oldest go first; max_age applies to them too); null: no limit."],
                ],
            ],
            "queue_limit": ["type": "integer", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.mostQueuedEvents), "default": 100000,
                            "description": "Events waiting for the writer at most; beyond it the oldest waiting are dropped and counted."],
            "synchronous": ["enum": ["normal", "full"], "default": "normal",
                            "description": "normal: an acknowledged event survives a crash of the agent (even SIGKILL); full: also a power loss, at the cost of a sync per commit."],
            "commit_interval": ["type": "number", "minimum": 0, "maximum": 1, "default": 0.005,
                                "description": "Seconds an event, a process's history line or a task run's change may wait for others to share its transaction (a crash of the agent loses at most that much of them: a run whose last change is lost runs again); 0 commits each wake-up of the writer at once."],
        ],
    ]

    /// Reads the section (already checked by the schema); numbers are clamped to the
    /// schema's bounds, so that a value it missed cannot overflow anything downstream.
    public init(_ value: JSONValue?) {
        guard let object = value?.objectValue else { return }
        func integer(_ value: JSONValue?, in range: ClosedRange<Int>) -> Int? {
            guard let number = value?.numberValue else { return nil }
            return min(max(number.intValue ?? Int(saturating: number.doubleValue), range.lowerBound), range.upperBound)
        }
        func seconds(_ value: JSONValue?, upTo longest: Double) -> Double? {
            guard let number = value?.numberValue?.doubleValue, !number.isNaN else { return nil }
            return min(max(number, 0), longest)
        }
        enabled = object["enabled"]?.boolValue ?? enabled
        path = object["path"]?.stringValue ?? path
        if let retention = object["retention"]?.objectValue {
            if let age = retention["max_age"] { maximumAge = seconds(age, upTo: SettingsBounds.longestRetention) }
            if let count = retention["max_events"] { maximumEvents = integer(count, in: 1...SettingsBounds.mostStoredEvents) }
            if let bytes = retention["max_bytes"] { maximumBytes = integer(bytes, in: SettingsBounds.smallestStore...SettingsBounds.largestStore) }
            if let count = retention["max_runs"] { maximumRuns = integer(count, in: 1...SettingsBounds.mostStoredEvents) }
        }
        queueLimit = integer(object["queue_limit"], in: 1...SettingsBounds.mostQueuedEvents) ?? queueLimit
        synchronous = object["synchronous"]?.stringValue ?? synchronous
        commitInterval = seconds(object["commit_interval"], upTo: 1) ?? commitInterval
    }

    /// The database file for an agent in `agentDirectory`.
    public func databasePath(agentDirectory: String) -> String {
        path.hasPrefix("/") ? path : agentDirectory + "/" + path
    }
}
