import AgentModuleKit

/// The system module: host statistics from /proc and a threshold monitor for them.
@_cdecl("agent_module_entry")
public func agentModuleEntry() -> OpaquePointer? {
    exportModule(name: "system", version: "1.0.0", processes: [HostStats.self, ThresholdMonitor.self])
}
