import JSONSchema

/// A signal sent to one workflow run (`agent-control workflow signal RUN NAME`, POST
/// /api/workflow-runs/{id}/signals/{name}), as Temporal's: never broadcast. A `wait_signal`
/// step of its name takes it; one sent before the run reaches such a step is kept in the run's
/// record (committed) until one does.
package struct WorkflowSignal: Sendable, Equatable {
    package var name: String
    package var payload: JSONValue
    /// Seconds since the epoch.
    package var time: Double
    /// Who sent it (the caller, as the audit names it).
    package var by: String
    /// Bytes of its payload's JSON text (what a run may keep is bounded by it).
    package var bytes = 0

    package init(name: String, payload: JSONValue, time: Double, by: String) {
        self.name = name
        self.payload = payload
        self.time = time
        self.by = by
    }

    /// The `wait_signal` step's output: later steps read `${steps:ID/payload/…}`, as an event's.
    package var output: JSONValue {
        ["name": .string(name), "payload": payload, "time": .string(TaskRun.iso(time)), "by": .string(by)]
    }

    package var storedJSON: JSONValue {
        ["name": .string(name), "payload": payload, "time": .number(JSONNumber(time)), "by": .string(by), "bytes": .number(JSONNumber(bytes))]
    }

    package init?(stored value: JSONValue) {
        guard let name = value["name"]?.stringValue, let time = value["time"]?.numberValue?.doubleValue else { return nil }
        self.init(name: name, payload: value["payload"] ?? .null, time: time, by: value["by"]?.stringValue ?? "")
        bytes = value["bytes"]?.numberValue?.intValue ?? 0
    }
}
