import AgentModuleABI

/// Makes this library an AgentRuntime module. Call it from the one C entry the host looks up:
///
/// ```swift
/// @_cdecl("agent_module_entry")
/// public func agentModuleEntry() -> OpaquePointer? {
///     exportModule(name: "sample", version: "1.0.0", processes: [TradeFeed.self, TradeFrequency.self])
/// }
/// ```
///
/// The first call builds the module description and the manifest; later calls return the same
/// pointer. `name` must match the name the module is enabled under in `settings.json`.
/// `tasks`: the module's task handlers (see ``TaskHandler``).
public func exportModule(
    name: String, version: String, processes: [any AgentProcess.Type], adapters: [any LogicAdapter.Type] = [],
    tasks: [any TaskHandler.Type] = []
) -> OpaquePointer? {
    ModuleRegistry.shared.export(name: name, version: version, processes: processes, adapters: adapters, tasks: tasks)
}
