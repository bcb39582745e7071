import AgentModuleABI
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
    }

    private let state = Mutex<Exported?>(nil)

    func export(name: String, version: String, processes: [any AgentProcess.Type], adapters: [any LogicAdapter.Type], tasks: [any TaskHandler.Type]) -> OpaquePointer? {
        state.withLock { exported in
            if let exported { return OpaquePointer(exported.pointer) }
            let entries = processes.map { ProcessEntry($0) }
            let taskEntries = tasks.map { Self.taskEntry($0) }
            let manifest = JSONText.object([
                ("name", .string(name)),
                ("version", .string(version)),
                ("processes", .array(entries.map(\.manifestJSON) + adapters.map { Self.manifestJSON(of: $0) } + taskEntries.map(\.manifestJSON))),
            ]).serialized()
            let module = UnsafeMutablePointer<agent_module>.allocate(capacity: 1)
            module.initialize(to: agent_module(
                abi_version: AGENT_MODULE_ABI_VERSION,
                struct_size: UInt32(MemoryLayout<agent_module>.size),
                manifest_json: UnsafePointer(strdup(manifest)),
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
            exported = Exported(pointer: module, processes: entries, adapters: adapters.map { AdapterEntry($0) }, tasks: taskEntries)
            return OpaquePointer(module)
        }
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

/// Holds the outcome of a process's run between its task and the blocked host thread.
private final class RunOutcome: @unchecked Sendable {
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)
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
    let runner: ProcessEntry.Runner
    do {
        runner = try entry.make(bytes)
    } catch {
        writeError("\(error)", to: errorBuffer, capacity: errorCapacity)
        return Int32(AGENT_BAD_SETTINGS)
    }

    let bridge = HostBridge(host)
    let context = ProcessContext(processName: processName, processType: typeName, host: bridge)
    context.startEventNotifications()
    defer { context.stopEventNotifications() }
    let outcome = RunOutcome()
    let task = Task {
        do {
            try await runner(context)
        } catch is CancellationError where bridge.stopRequested {
            // Stopping by cancellation is the normal way to end.
        } catch {
            outcome.error = error
        }
        context.invalidate()
        outcome.done.signal()
    }
    bridge.onStop { task.cancel() }
    let heartbeats = context.startHeartbeats()
    outcome.done.wait()
    heartbeats?.cancel()
    if let error = outcome.error {
        writeError("\(error)", to: errorBuffer, capacity: errorCapacity)
        return Int32(AGENT_ERROR)
    }
    return Int32(AGENT_OK)
}
