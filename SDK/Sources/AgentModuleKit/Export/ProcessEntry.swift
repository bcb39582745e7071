import AgentModuleABI
import CAgentModuleKit
import Foundation

/// A process type with its Swift types erased, as the registry keeps it.
///
/// Made without reading the type's settings schema: the schema (built by reflection over the
/// settings declaration, the costliest part of a module's entry) is read when the manifest is
/// written or a process of this type is made, and a worker that only runs one process type
/// needs it for that type alone.
struct ProcessEntry: Sendable {
    typealias Runner = @Sendable (ProcessContext) async throws -> Void

    let typeName: String
    let kind: ProcessKind
    /// The type's entry in the module's manifest.
    let manifestJSON: @Sendable () -> JSONText
    /// Decodes settings (defaults filled in) and creates the process; throws a readable error.
    let make: @Sendable ([UInt8]) throws -> Runner
    /// Builds what making a process builds, without making one (`agent_module_warm_up`).
    let warmUp: @Sendable () -> Void

    init<P: AgentProcess>(_ type: P.Type) {
        typeName = P.typeName
        kind = P.kind
        let schema = ComputedOnce { P.settingsSchema }
        manifestJSON = {
            var fields: [(String, JSONText)] = [
                ("type", .string(P.typeName)),
                ("kind", .string(P.kind.rawValue)),
                ("description", .string(P.description)),
                ("settings_schema", schema.value.json),
            ]
            let subscriptions = P.defaultSubscriptions
            let queries = P.periodicQueries
            if !subscriptions.isEmpty { fields.append(("subscribes", .array(subscriptions.map(JSONText.string)))) }
            if !queries.isEmpty { fields.append(("queries", .array(queries.map(\.manifestJSON)))) }
            return .object(fields)
        }
        make = { bytes in
            let settings: P.Settings = try SettingsDecoding.decode(P.Settings.self, from: bytes, schema: schema.value)
            let process = try P(settings: settings)
            return { context in try await process.run(context: context) }
        }
        warmUp = { _ = try? SettingsDecoding.decode(P.Settings.self, from: SettingsDecoding.emptyObject, schema: schema.value) }
    }
}

extension ProcessEntry {
    /// Why a run could not start or ended in error: the code `run_process` returns and the
    /// message for the host's error buffer.
    struct RunFailure: Error {
        let code: Int32
        let message: String
    }

    /// Runs one process of this type until it ends: `run_process`, from the host's thread.
    /// Where the host lets a thread sleep until events arrive (`wait_events`), that thread
    /// runs the process's task (``ProcessExecutor``); else it waits while the task runs on the
    /// cooperative pool.
    func run(name: String, settings: [UInt8], host: UnsafePointer<agent_host_api>) -> Result<Void, RunFailure> {
        let runner: Runner
        do {
            runner = try make(settings)
        } catch {
            return .failure(RunFailure(code: Int32(AGENT_BAD_SETTINGS), message: "\(error)"))
        }
        let bridge = HostBridge(host)
        let context = ProcessContext(processName: name, processType: typeName, host: bridge)
        context.startEventNotifications()
        defer { context.stopEventNotifications() }
        let outcome = RunOutcome()
        let executor = bridge.canWaitForEvents ? ProcessExecutor(host: bridge, context: context) : nil
        let task = Task(executorPreference: executor) {
            do {
                try await runner(context)
            } catch is CancellationError where bridge.stopRequested {
                // Stopping by cancellation is the normal way to end.
            } catch {
                outcome.error = error
            }
            context.invalidate()
            outcome.done.signal()
            executor?.finish()
        }
        bridge.onStop { task.cancel() }
        let heartbeats = context.startHeartbeats()
        // The pages the settings' decoding and the task's start went through are given back, in
        // every worker: the thread waits, or runs the task, from near the top of its stack.
        _ = agent_module_kit_trim_stack()
        executor?.run()
        outcome.done.wait()
        heartbeats?.cancel()
        if let error = outcome.error { return .failure(RunFailure(code: Int32(AGENT_ERROR), message: "\(error)")) }
        return .success(())
    }
}

/// Holds the outcome of a process's run between its task and the host's thread.
private final class RunOutcome: @unchecked Sendable {
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)
}

/// Turns settings JSON into a `Settings` value, with errors that name the JSON pointer.
enum SettingsDecoding {
    /// `{}`: what a warm-up decodes, down the path a worker's settings take.
    static let emptyObject = Array("{}".utf8)

    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], schema: Schema) throws -> T {
        if !bytes.isEmpty, !schema.declaresPropertyDefaults {
            return try decodeWithoutDefaults(type, from: bytes)
        }
        let raw: Any
        do {
            raw = try JSONSerialization.jsonObject(with: Data(bytes.isEmpty ? Array("{}".utf8) : bytes),
                                                   options: [.fragmentsAllowed])
        } catch {
            throw SettingsError(pointer: "", message: "settings are not valid JSON")
        }
        let filled = schema.applyingDefaults(to: raw)
        let data = try JSONSerialization.data(withJSONObject: filled, options: [.fragmentsAllowed])
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw SettingsError(error)
        }
    }

    /// `bytes` decoded as they are (the schema fills nothing in).
    private static func decodeWithoutDefaults<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            // Not JSON at all reads as the slow path says it.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) == nil {
                throw SettingsError(pointer: "", message: "settings are not valid JSON")
            }
            throw SettingsError(error)
        }
    }
}

/// A setting that could not be decoded: where (JSON pointer) and why.
struct SettingsError: Error, CustomStringConvertible {
    let pointer: String
    let message: String

    init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    init(_ error: DecodingError) {
        func pointer(_ path: [any CodingKey]) -> String {
            path.map { "/" + ($0.intValue.map(String.init) ?? $0.stringValue) }.joined()
        }
        switch error {
        case .typeMismatch(let type, let context):
            // Foundation says "Expected to decode Double but found a string instead."
            let found = context.debugDescription.range(of: "but found ").map { context.debugDescription[$0.upperBound...] }
                .flatMap { $0.hasSuffix(" instead.") ? $0.dropLast(" instead.".count) : nil }
            self.init(pointer: pointer(context.codingPath),
                      message: "expected \(Self.describe(type)), " + (found.map { "found \($0)" } ?? context.debugDescription))
        case .valueNotFound(let type, let context):
            self.init(pointer: pointer(context.codingPath), message: "expected \(Self.describe(type)), found null")
        case .keyNotFound(let key, let context):
            self.init(pointer: pointer(context.codingPath + [key]), message: "missing required setting \"\(key.stringValue)\"")
        case .dataCorrupted(let context):
            self.init(pointer: pointer(context.codingPath), message: context.debugDescription)
        @unknown default:
            self.init(pointer: "", message: "\(error)")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        default: "a value of type \(type)"
        }
    }

    var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
}
