import AgentModuleKit

/// The bench module: the processes `agent-bench` measures the runtime with. A datasource that
/// emits numbered events at a chosen rate and size, a monitor that counts them and measures
/// their latency, and a process that does nothing (an idle worker).
@_cdecl("agent_module_entry")
public func agentModuleEntry() -> OpaquePointer? {
    exportModule(name: "bench", version: "1.0.0", processes: [BenchSource.self, BenchSink.self, BenchIdle.self, BenchTaskSource.self],
                 tasks: [BenchNoop.self, BenchRecord.self])
}
