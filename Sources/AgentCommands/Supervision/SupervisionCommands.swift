import AgentBase
import AgentSupervision
import JSONSchema

/// The supervision commands (`agent-control status`, `stop`, `process …`, `logs`…): their
/// shared schemas, and the list the registry boxes.
package enum SupervisionCommands {
    /// Every typed supervision command.
    package static let all: [any AgentCommand.Type] = [
        StatusCommand.self, ReloadCommand.self, StopCommand.self, ProcessCommand.self, LogsCommand.self,
        MetricsCommand.self, ReadinessCommand.self, DiagnosticsCommand.self,
    ]

    package static let processName: JSONValue = ["type": "string", "minLength": 1, "description": "The process's name in the settings (a process with replicas: all of them), or one replica's, NAME#N."]

    /// A process as `status` shows it.
    package static let processSchema: JSONValue = CommandSchema.object([
        "name": ["type": "string"], "type": ["type": "string"], "module": ["type": "string"],
        "state": ["type": "string", "enum": ["starting", "running", "backoff", "stopping", "stopped", "exited", "failed", "suspended", "disabled"]],
        "pid": ["type": "integer"], "restarts": ["type": "integer", "minimum": 0],
        "state_seconds": ["type": "number"], "retry_in": ["type": "number"], "reason": ["type": "string"],
        "exit_code": ["type": "integer"], "last_exit": ["type": "string"], "last_exit_code": ["type": "integer"],
        "last_signal": ["type": "string"], "stop_signal": ["type": "string"],
        "events_emitted": ["type": "integer"], "events_delivered": ["type": "integer"], "events_dropped": ["type": "integer"],
        "queued_bytes": ["type": "integer"], "paused": ["type": "boolean"], "times_paused": ["type": "integer"],
        "lines_refused": ["type": "integer", "minimum": 0, "description": "A jsonl/1 module's process: lines its program wrote that were refused (not JSON, not a frame, too long)."],
        "restarting": ["type": "boolean"], "cpu_seconds": ["type": "number"], "rss_bytes": ["type": "integer"],
        "replica_of": ["type": "string", "description": "A replica's process: its name in the settings (the replica is NAME#N)."],
        "replica": ["type": "integer", "minimum": 1, "description": "A replica's number."],
    ], required: ["name", "state"], open: true)

    /// A process for the examples of the agreement test.
    static let exampleProcess: JSONValue = ["name": "fetcher", "state": "running", "pid": 4242, "restarts": 0]
    static var exampleProcessInfo: SupervisedProcessInfo {
        SupervisedProcessInfo(name: "fetcher", type: "fetch", module: "feeds", state: .running, pid: 4242)
    }
}
