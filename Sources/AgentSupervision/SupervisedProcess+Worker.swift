import AgentCore
import AgentLoop
import JSONSchema

/// A process's worker as the supervisor hands it over: its pid and descriptors, and the start
/// frame that tells it what to load and run.
extension SupervisedProcess {
    /// Gives this process the new worker's pid and fds, and forgets what was about the last one.
    package func adopt(_ worker: LaunchedWorker) {
        startRetries = 0
        pid = worker.pid
        channelFD = worker.channelFD
        outputs[0].fd = worker.stdoutFD
        outputs[1].fd = worker.stderrFD
        pidFD = worker.pidFD
        spawnedAt = EventLoop.now()
        lastHeartbeat = 0
        killReason = nil
        suspendedBy = nil
        reportedFailure = nil
        decoder = FrameDecoder()
        for index in outputs.indices {
            outputs[index].line.removeAll()
            outputs[index].length = 0
        }
    }

    /// The start frame's body: what the worker loads and runs.
    package var startFrame: String {
        var fields: JSONObject = [
            "module": .string(module.library), "module_name": .string(module.name),
            "type": .string(type), "name": .string(name), "settings": .object(settings),
            "watchdog_ms": .number(JSONNumber(Saturating.milliseconds(policy.watchdog ?? 0))),
            // A jsonl/1 program gets half of it between its stop frame and SIGTERM.
            "stop_timeout_ms": .number(JSONNumber(Saturating.milliseconds(policy.stopTimeout))),
            "adapter_libraries": .object(JSONObject(planned.adapterLibraries.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })),
        ]
        if isTaskExecutor { fields["task"] = true }
        return JSONValue.object(fields).serialized()
    }
}
