import AgentModuleKit

/// The sample module: a simulated trade feed and a monitor that counts trades per pair.
@_cdecl("agent_module_entry")
public func agentModuleEntry() -> OpaquePointer? {
    exportModule(name: "sample", version: "1.0.0", processes: [TradeFeed.self, TradeFrequency.self], adapters: [TradesCounter.self])
}
