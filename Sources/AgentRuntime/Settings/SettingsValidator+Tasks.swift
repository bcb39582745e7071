import AgentCore
import AgentSupervision
import AgentWork
import JSONSchema

extension SettingsValidator {
    /// The module and manifest entry of a task type `"<module>.<type>"` of kind `task`.
    static func moduleTaskType(_ name: String, modules: [ModuleLocation], manifests: [String: ModuleManifest]) -> (module: ModuleLocation, type: ModuleManifest.ProcessType)? {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let module = modules.first(where: { $0.name == parts[0] }),
              let type = manifests[parts[0]]?.processType(parts[1]), type.kind == "task" else { return nil }
        return (module, type)
    }

    /// The problems of a task's type: `"command"` is built in; `"<module>.<type>"` must name a
    /// task handler (kind `task`) of an enabled module, and its `"settings"` must pass the
    /// handler's schema.
    mutating func checkTaskType(_ task: TaskDefinition, modules: [ModuleLocation], manifests: [String: ModuleManifest],
                                failedModules: Set<String>) -> [(pointer: String, message: String, followsFrom: String?)] {
        guard task.type != "command" else { return [] }
        let pointer = "/tasks/" + JSONPointer.escape(task.name)
        let parts = task.type.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return [] } // said by TaskSettings
        let (moduleName, typeName) = (parts[0], parts[1])
        guard let module = modules.first(where: { $0.name == moduleName }), let manifest = manifests[moduleName] else {
            if failedModules.contains(moduleName) {
                return [(pointer + "/type", "task type \"\(task.type)\": module \"\(moduleName)\" could not be loaded (see /enabled_modules)", "/enabled_modules")]
            }
            let enabled = modules.map(\.name).filter { $0 != BuiltinModules.chatLocation.name }
            return [(pointer + "/type", "task type \"\(task.type)\": module \"\(moduleName)\" is not enabled\(Suggestions.hint(for: moduleName, in: enabled)); add it to \"enabled_modules\" (enabled: \(enabled.isEmpty ? "none" : enabled.joined(separator: ", ")))", nil)]
        }
        let handlers = manifest.processes.filter { $0.kind == "task" }.map(\.type)
        guard let type = manifest.processType(typeName) else {
            return [(pointer + "/type", "module \"\(moduleName)\" has no task type \"\(typeName)\"\(Suggestions.hint(for: typeName, in: handlers)); its task types: \(handlers.isEmpty ? "none" : handlers.joined(separator: ", "))", nil)]
        }
        guard type.kind == "task" else {
            return [(pointer + "/type", "\"\(task.type)\" is a \(type.kind), not a task handler; a task's type is \"command\" or a type of kind \"task\" (module \"\(moduleName)\" has: \(handlers.isEmpty ? "none" : handlers.joined(separator: ", ")))", nil)]
        }
        let probe = ProcessSettings(name: task.name, json: .object(["type": .string(typeName)]), pointer: pointer + "/settings")
        guard var process = probe else { return [] }
        process.moduleSettings = task.settings.objectValue ?? [:]
        return validateModuleSettings(process, module: module, type: type, file: "").map { ($0.pointer, $0.message, nil) }
    }
}
