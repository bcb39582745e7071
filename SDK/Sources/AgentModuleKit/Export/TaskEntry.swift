import AgentModuleABI
import Foundation
import Synchronization

/// A task handler type with its Swift types erased, as the registry keeps it.
struct TaskEntry: Sendable {
    typealias Run = @Sendable (_ input: [UInt8], _ context: TaskContext) async throws -> [UInt8]

    let typeName: String
    let manifestJSON: JSONText
    /// Decodes settings (defaults filled in) and creates the handler; throws a readable error.
    let make: @Sendable ([UInt8]) throws -> Run

    init<H: TaskHandler>(_ type: H.Type) {
        typeName = H.typeName
        var fields: [(String, JSONText)] = [
            ("type", .string(H.typeName)),
            ("kind", .string(ProcessKind.task.rawValue)),
            ("description", .string(H.description)),
            ("settings_schema", H.settingsSchema.json),
            ("input_schema", H.inputSchema.json),
        ]
        if let output = H.outputSchema { fields.append(("output_schema", output.json)) }
        if let timeout = H.heartbeatTimeout, timeout > 0, timeout.isFinite { fields.append(("heartbeat_timeout", .double(timeout))) }
        manifestJSON = .object(fields)
        let settingsSchema = H.settingsSchema
        let inputSchema = H.inputSchema
        make = { bytes in
            let handler = try H(settings: SettingsDecoding.decode(H.Settings.self, from: bytes, schema: settingsSchema))
            return { input, context in
                let value = try Self.input(H.self, from: input, schema: inputSchema)
                let output = try await handler.run(input: value, context: context)
                // Runs waiting to start go first: in a burst (a schedule's instant) the pool's
                // threads start every run before they encode and send the first results.
                await Task.yield()
                return Array(try JSONEncoder().encode(output))
            }
        }
    }

    /// A run's input decoded, the schema's defaults filled in; an error names the field.
    static func input<H: TaskHandler>(_ type: H.Type, from bytes: [UInt8], schema: Schema) throws -> H.Input {
        do {
            return try SettingsDecoding.decode(H.Input.self, from: bytes, schema: schema)
        } catch let error as SettingsError {
            throw TaskInputError(error: error)
        }
    }
}

/// A run's input that does not decode into the handler's `Input`: where and why.
struct TaskInputError: Error, CustomStringConvertible {
    let error: SettingsError
    var description: String {
        // The decoding errors speak of settings; these are a run's input.
        let message = error.message.replacingOccurrences(of: "required setting", with: "required field")
            .replacingOccurrences(of: "settings are not valid JSON", with: "the input is not valid JSON")
        return "the input does not fit \(error.pointer.isEmpty ? "the handler" : "field \(error.pointer)"): \(message)"
    }
}

/// One executor's handler: its runs by the host's token, to cancel them.
final class TaskInstance: Sendable {
    let run: TaskEntry.Run
    let host: HostBridge
    /// The runs going; the tokens of runs that ended, or were cancelled, before their Task was
    /// registered (the host may cancel from another thread than the one that starts runs).
    private let runs = Mutex<(tasks: [UInt64: Task<Void, Never>], ended: Set<UInt64>, cancelled: Set<UInt64>)>(([:], [], []))

    init(run: @escaping TaskEntry.Run, host: HostBridge) {
        self.run = run
        self.host = host
    }

    /// Keeps `task` of run `token` for a cancel, unless it already ended. The Task is made
    /// before this (not under the lock, which its own end takes as well: with a burst of runs,
    /// the runs' Tasks waited for each other's creation).
    func register(_ task: Task<Void, Never>, token: UInt64) {
        let cancelled = runs.withLock { runs -> Bool in
            if runs.ended.remove(token) == nil { runs.tasks[token] = task }
            return runs.cancelled.remove(token) != nil
        }
        if cancelled { task.cancel() }
    }

    /// Run `token` ended: it leaves the table (or is noted, if it ended before it got there).
    func ended(_ token: UInt64) {
        runs.withLock { runs in
            if runs.tasks.removeValue(forKey: token) == nil { runs.ended.insert(token) }
        }
    }

    /// Cancels run `token`, now or as soon as its Task is registered.
    func cancel(_ token: UInt64) {
        runs.withLock { runs -> Task<Void, Never>? in
            guard let task = runs.tasks[token] else {
                if !runs.ended.contains(token) { runs.cancelled.insert(token) }
                return nil
            }
            return task
        }?.cancel()
    }
}

let taskCreateEntry: agent_task_create_fn = { typePointer, settings, settingsLength, host, errorBuffer, errorCapacity in
    guard let typePointer, let host else { return nil }
    let typeName = String(cString: typePointer)
    guard let entry = ModuleRegistry.shared.task(named: typeName) else {
        writeError("this module has no task type \"\(typeName)\"", to: errorBuffer, capacity: errorCapacity)
        return nil
    }
    let bytes = settings.map { Array(UnsafeRawBufferPointer(start: $0, count: settingsLength)) } ?? []
    do {
        return Unmanaged.passRetained(TaskInstance(run: try entry.make(bytes), host: HostBridge(host))).toOpaque()
    } catch {
        writeError("\(error)", to: errorBuffer, capacity: errorCapacity)
        return nil
    }
}

let taskRunEntry: agent_task_run_fn = { handle, run in
    guard let handle, let run else { return Int32(AGENT_ERROR) }
    let instance = Unmanaged<TaskInstance>.fromOpaque(handle).takeUnretainedValue()
    let raw = run.pointee
    let token = raw.run_token
    let runID = raw.run_id.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: raw.run_id_len), as: UTF8.self) } ?? ""
    let key = raw.idempotency_key.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: raw.idempotency_key_len), as: UTF8.self) } ?? runID
    let input = raw.input_json.map { Array(UnsafeBufferPointer(start: $0, count: raw.input_len)) } ?? []
    let context = TaskContext(runID: runID, idempotencyKey: key, attempt: Int(raw.attempt), token: token, host: instance.host)
    let task = Task {
        let result: Result<[UInt8], any Error>
        do {
            result = .success(try await instance.run(input, context))
        } catch {
            result = .failure(error)
        }
        instance.ended(token)
        switch result {
        case .success(let output): instance.host.taskComplete(token: token, succeeded: true, data: output)
        case .failure(let error as CancellationError):
            instance.host.taskComplete(token: token, succeeded: false, data: Array("cancelled (\(error))".utf8))
        case .failure(let error): instance.host.taskComplete(token: token, succeeded: false, data: Array("\(error)".utf8))
        }
    }
    instance.register(task, token: token)
    return Int32(AGENT_OK)
}

let taskCancelEntry: agent_task_cancel_fn = { handle, token in
    guard let handle else { return }
    let instance = Unmanaged<TaskInstance>.fromOpaque(handle).takeUnretainedValue()
    instance.cancel(token)
}
