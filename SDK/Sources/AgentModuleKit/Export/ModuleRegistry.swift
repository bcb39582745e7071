import AgentModuleABI
import CAgentModuleKit
import Dispatch
import Foundation
import Synchronization

/// Owns this library's `agent_module` description. Each module library carries its own copy
/// of the SDK, so this registry is per module.
final class ModuleRegistry: Sendable {
    static let shared = ModuleRegistry()

    private struct Exported: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<agent_module>
        let processes: [ProcessEntry]
        let adapters: [AdapterEntry]
        let tasks: [TaskEntry]
        /// `manifest_json` is the partial manifest (the host deferred it at the first call).
        var isPartial: Bool
    }

    private let state = Mutex<Exported?>(nil)
    /// Set by the host's call of `agent_module_defer_manifest` before an entry call, and taken
    /// by that call: the manifest then names only the types and kinds (``partialManifest``).
    private let manifestDeferred = Atomic<Bool>(false)

    /// The host only runs this module's processes and tasks (it does not describe it).
    func deferManifest() {
        manifestDeferred.store(true, ordering: .relaxed)
    }

    func export(name: String, version: String, processes: [any AgentProcess.Type], adapters: [any LogicAdapter.Type], tasks: [any TaskHandler.Type]) -> OpaquePointer? {
        let deferred = manifestDeferred.exchange(false, ordering: .relaxed)
        return state.withLock { exported in
            let entries = exported?.processes ?? processes.map { ProcessEntry($0) }
            let adapterEntries = exported?.adapters ?? adapters.map { AdapterEntry($0) }
            let taskEntries = exported?.tasks ?? tasks.map { Self.taskEntry($0) }
            func wholeManifest() -> UnsafePointer<CChar> {
                UnsafePointer(strdup(JSONText.object([
                    ("name", .string(name)),
                    ("version", .string(version)),
                    ("processes", .array(entries.map { $0.manifestJSON() } + adapters.map { Self.manifestJSON(of: $0) } + taskEntries.map { $0.manifestJSON() })),
                ]).serialized()))
            }
            if let pointer = exported?.pointer {
                // A host that deferred the manifest first and asks for the whole of it now (never
                // the runtime's own workers; a program that both runs and describes): the partial
                // one stays valid, as the header promises, and the description points to the whole.
                if !deferred, exported?.isPartial == true {
                    pointer.pointee.manifest_json = wholeManifest()
                    exported?.isPartial = false
                }
                return OpaquePointer(pointer)
            }
            let manifest: UnsafePointer<CChar>
            if deferred {
                let kinds = entries.map { ($0.typeName, $0.kind) } + adapterEntries.map { ($0.typeName, ProcessKind.logicAdapter) }
                    + taskEntries.map { ($0.typeName, ProcessKind.task) }
                manifest = UnsafePointer(strdup(Self.partialManifest(name: name, version: version, kinds: kinds)))
            } else {
                manifest = wholeManifest()
            }
            let module = UnsafeMutablePointer<agent_module>.allocate(capacity: 1)
            module.initialize(to: agent_module(
                abi_version: AGENT_MODULE_ABI_VERSION,
                struct_size: UInt32(MemoryLayout<agent_module>.size),
                manifest_json: manifest,
                run_process: runProcessEntry,
                adapter_create: adapters.isEmpty ? nil : adapterCreateEntry,
                adapter_score: adapters.isEmpty ? nil : adapterScoreEntry,
                adapter_respond: adapters.isEmpty ? nil : adapterRespondEntry,
                adapter_destroy: adapters.isEmpty ? nil : adapterDestroyEntry,
                task_create: tasks.isEmpty ? nil : taskCreateEntry,
                task_run: tasks.isEmpty ? nil : taskRunEntry,
                task_cancel: tasks.isEmpty ? nil : taskCancelEntry,
                task_prepare: tasks.isEmpty ? nil : taskPrepareEntry,
                task_start: tasks.isEmpty ? nil : taskStartEntry
            ))
            exported = Exported(pointer: module, processes: entries, adapters: adapterEntries, tasks: taskEntries, isPartial: deferred)
            return OpaquePointer(module)
        }
    }

    /// The manifest a host that deferred it gets: the name, the version and each type's kind,
    /// marked `"partial": true` (agent_module.h, `AGENT_MODULE_DEFER_MANIFEST_SYMBOL`).
    static func partialManifest(name: String, version: String, kinds: [(String, ProcessKind)]) -> String {
        JSONText.object([
            ("name", .string(name)),
            ("version", .string(version)),
            ("partial", .bool(true)),
            ("processes", .array(kinds.map { .object([("type", .string($0.0)), ("kind", .string($0.1.rawValue))]) })),
        ]).serialized()
    }

    static func manifestJSON<A: LogicAdapter>(of adapter: A.Type) -> JSONText {
        .object([
            ("type", .string(A.typeName)),
            ("kind", .string(ProcessKind.logicAdapter.rawValue)),
            ("description", .string(A.description)),
            ("settings_schema", A.settingsSchema.json),
            ("usage_examples", .array(A.usageExamples.map(JSONText.string))),
        ])
    }

    func process(named type: String) -> ProcessEntry? {
        state.withLock { $0?.processes.first { $0.typeName == type } }
    }

    static func taskEntry<H: TaskHandler>(_ type: H.Type) -> TaskEntry { TaskEntry(type) }

    func task(named type: String) -> TaskEntry? {
        state.withLock { $0?.tasks.first { $0.typeName == type } }
    }

    func adapter(named type: String) -> AdapterEntry? {
        state.withLock { $0?.adapters.first { $0.typeName == type } }
    }

    var processTypes: [String] { state.withLock { $0?.processes.map(\.typeName) ?? [] } }

    /// Reads every type's schemas and decodes `{}` as its settings (and a task's input): the
    /// type metadata, conformances and schemas a worker's start builds, built once here.
    func warmUp() {
        guard let exported = state.withLock({ $0 }) else { return }
        for entry in exported.processes { entry.warmUp() }
        for entry in exported.adapters { entry.warmUp() }
        for entry in exported.tasks { entry.warmUp() }
        // What every process's run looks up the same way, whatever its type: its entry's
        // lookup, and the metadata its executor and task take by mangled name.
        _ = process(named: "")
        ProcessExecutor.warmUp()
    }
}

/// Called by a module's zygote after the entry, before it forks the module's workers
/// (agent_module.h, `AGENT_MODULE_WARM_UP_SYMBOL`): what each worker would build at its start
/// is built once, and inherited.
@_cdecl("agent_module_warm_up")
public func agentModuleWarmUp() {
    ModuleRegistry.shared.warmUp()
}

/// Called by a host before `agent_module_entry` when it loads the module only to run it: the
/// manifest is then partial, and no type's settings schema is read until a process is made.
@_cdecl("agent_module_defer_manifest")
public func agentModuleDeferManifest() {
    ModuleRegistry.shared.deferManifest()
}

/// Copies `message` into the host's error buffer, truncated to fit, NUL-terminated.
func writeError(_ message: String, to buffer: UnsafeMutablePointer<CChar>?, capacity: Int) {
    guard let buffer, capacity > 0 else { return }
    let bytes = Array(message.utf8.prefix(capacity - 1))
    bytes.withUnsafeBufferPointer { src in
        buffer.withMemoryRebound(to: UInt8.self, capacity: capacity) { dst in
            dst.update(from: src.baseAddress!, count: bytes.count)
            dst[bytes.count] = 0
        }
    }
}

private let runProcessEntry: agent_run_process_fn = { typePointer, namePointer, settings, settingsLength, host, errorBuffer, errorCapacity in
    guard let typePointer, let host else {
        writeError("run_process called without a process type or host table", to: errorBuffer, capacity: errorCapacity)
        return Int32(AGENT_ERROR)
    }
    let typeName = String(cString: typePointer)
    let processName = namePointer.map { String(cString: $0) } ?? typeName
    guard let entry = ModuleRegistry.shared.process(named: typeName) else {
        let known = ModuleRegistry.shared.processTypes.map { "\"\($0)\"" }.joined(separator: ", ")
        writeError("this module has no process type \"\(typeName)\" (it has \(known))", to: errorBuffer, capacity: errorCapacity)
        return Int32(AGENT_UNKNOWN_TYPE)
    }
    let bytes = settings.map { Array(UnsafeRawBufferPointer(start: $0, count: settingsLength)) } ?? []
    switch entry.run(name: processName, settings: bytes, host: host) {
    case .success: return Int32(AGENT_OK)
    case .failure(let failure):
        writeError(failure.message, to: errorBuffer, capacity: errorCapacity)
        return failure.code
    }
}
