import AgentModuleABI
import Foundation
import Synchronization

/// A task handler type with its Swift types erased, as the registry keeps it.
struct TaskEntry: Sendable {
    /// A run whose input was decoded: the handler's body, the output encoded.
    typealias Prepared = @Sendable (_ context: TaskContext) async throws -> [UInt8]
    /// Decodes a run's input (an error is thrown when the run starts, not here).
    typealias Prepare = @Sendable (_ input: [UInt8]) -> Prepared

    let typeName: String
    /// The type's entry in the module's manifest (its schemas read only then).
    let manifestJSON: @Sendable () -> JSONText
    /// Decodes settings (defaults filled in) and creates the handler; throws a readable error.
    let make: @Sendable ([UInt8]) throws -> Prepare
    /// Builds what making a handler and decoding an input build, without making one
    /// (`agent_module_warm_up`).
    let warmUp: @Sendable () -> Void

    init<H: TaskHandler>(_ type: H.Type) {
        typeName = H.typeName
        let settingsSchema = ComputedOnce { H.settingsSchema }
        let inputSchema = ComputedOnce { H.inputSchema }
        manifestJSON = {
            var fields: [(String, JSONText)] = [
                ("type", .string(H.typeName)),
                ("kind", .string(ProcessKind.task.rawValue)),
                ("description", .string(H.description)),
                ("settings_schema", settingsSchema.value.json),
                ("input_schema", inputSchema.value.json),
            ]
            if let output = H.outputSchema { fields.append(("output_schema", output.json)) }
            if let timeout = H.heartbeatTimeout, timeout > 0, timeout.isFinite { fields.append(("heartbeat_timeout", .double(timeout))) }
            return .object(fields)
        }
        make = { bytes in
            let handler = try H(settings: SettingsDecoding.decode(H.Settings.self, from: bytes, schema: settingsSchema.value))
            let inputSchema = inputSchema.value
            return { input in
                let value = Result { try Self.input(H.self, from: input, schema: inputSchema) }
                return { context in
                    let output = try await handler.run(input: value.get(), context: context)
                    // Runs waiting to start go first: in a burst (a schedule's instant) the pool's
                    // threads start every run before they encode and send the first results.
                    await Task.yield()
                    return Array(try JSONEncoder().encode(output))
                }
            }
        }
        warmUp = {
            _ = try? SettingsDecoding.decode(H.Settings.self, from: SettingsDecoding.emptyObject, schema: settingsSchema.value)
            _ = try? Self.input(H.self, from: SettingsDecoding.emptyObject, schema: inputSchema.value)
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

let taskCreateEntry: agent_task_create_fn = { typePointer, settings, settingsLength, host, errorBuffer, errorCapacity in
    guard let typePointer, let host else { return nil }
    let typeName = String(cString: typePointer)
    guard let entry = ModuleRegistry.shared.task(named: typeName) else {
        writeError("this module has no task type \"\(typeName)\"", to: errorBuffer, capacity: errorCapacity)
        return nil
    }
    let bytes = settings.map { Array(UnsafeRawBufferPointer(start: $0, count: settingsLength)) } ?? []
    do {
        return Unmanaged.passRetained(TaskInstance(prepare: try entry.make(bytes), host: HostBridge(host))).toOpaque()
    } catch {
        writeError("\(error)", to: errorBuffer, capacity: errorCapacity)
        return nil
    }
}
