import JSONSchema

extension CommandCatalog {
    /// `metrics` and `readiness`: answered from a snapshot of the agent, like `status` (see
    /// ``AgentSnapshot``). `GET /metrics` and `GET /readyz` are their Prometheus and probe
    /// forms.
    package static let health: [CommandDescription] = [
        CommandDescription(
            name: "metrics", summary: "The agent's metrics as families named the Prometheus way (GET /metrics gives them in the Prometheus text format).",
            method: "GET", path: "/api/metrics",
            answer: CommandDescription.object([
                "ok": ["const": true],
                "families": ["type": "array", "items": CommandDescription.object([
                    "name": ["type": "string", "pattern": "^agent_[a-z0-9_]+$"], "type": ["enum": ["counter", "gauge"]], "help": ["type": "string"],
                    "samples": ["type": "array", "items": CommandDescription.object([
                        "labels": ["type": "object", "additionalProperties": ["type": "string"]], "value": ["type": "number"],
                    ], required: ["labels", "value"])],
                ], required: ["name", "type", "help", "samples"])],
            ], required: ["ok", "families"]),
            mutating: false),
        CommandDescription(
            name: "readiness", summary: "Whether the store is writable and every enabled process running or restarting without flapping; the reasons when not (GET /readyz answers 503 then).",
            method: "GET", path: "/api/readiness",
            request: Readiness.requestSchema,
            answer: CommandDescription.object([
                "ok": ["const": true], "ready": ["type": "boolean"],
                "reasons": ["type": "array", "items": ["type": "string"]],
                "failures": ["type": "integer"], "window": ["type": "number"],
            ], required: ["ok", "ready", "reasons"]),
            mutating: false),
    ]
}
