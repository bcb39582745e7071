import AgentModuleKit

/// A module for testing the supervisor with real faults: a process that crashes, aborts,
/// hangs, ignores stop requests or leaves a child behind, on purpose. Not enabled by the
/// agent in this repository; the tests use it.
@_cdecl("agent_module_entry")
public func agentModuleEntry() -> OpaquePointer? {
    exportModule(name: "faults", version: "1.0.0", processes: [Fault.self, SlowSink.self, BigEvents.self, Relay.self, MemoryStarts.self],
                 tasks: [FaultTask.self, MemoryTask.self])
}
