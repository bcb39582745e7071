import AgentModuleKit

/// The sample module: a simulated trade feed, a monitor that counts trades per pair, a chat
/// adapter that counts them from the store, and a task handler that counts words.
@_cdecl("agent_module_entry")
public func agentModuleEntry() -> OpaquePointer? {
    exportModule(name: "sample", version: "1.0.0", processes: [TradeFeed.self, TradeFrequency.self], adapters: [TradesCounter.self],
                 tasks: [WordCount.self])
}
