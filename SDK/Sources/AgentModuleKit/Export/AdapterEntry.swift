import AgentModuleABI
import Dispatch
import Foundation

/// A logic adapter type with its Swift types erased, as the registry keeps it.
struct AdapterEntry: Sendable {
    let typeName: String
    let make: @Sendable ([UInt8]) throws -> AdapterInstance
    /// Builds what making an adapter builds, without making one (`agent_module_warm_up`).
    let warmUp: @Sendable () -> Void

    init<A: LogicAdapter>(_ type: A.Type) {
        typeName = A.typeName
        let schema = ComputedOnce { A.settingsSchema }
        warmUp = { _ = try? SettingsDecoding.decode(A.Settings.self, from: SettingsDecoding.emptyObject, schema: schema.value) }
        make = { bytes in
            let adapter = try A(settings: SettingsDecoding.decode(A.Settings.self, from: bytes, schema: schema.value))
            return AdapterInstance(
                confidence: { adapter.confidence(for: $0) },
                respond: { message, context in try await adapter.respond(to: message, context: context) })
        }
    }
}

/// One created adapter, behind the handle the host holds.
final class AdapterInstance: Sendable {
    let confidence: @Sendable (String) -> Double?
    let respond: @Sendable (String, AdapterContext) async throws -> String
    let context = AdapterContextSlot()

    init(confidence: @escaping @Sendable (String) -> Double?, respond: @escaping @Sendable (String, AdapterContext) async throws -> String) {
        self.confidence = confidence
        self.respond = respond
    }
}

/// The adapter's context, set once at creation.
final class AdapterContextSlot: @unchecked Sendable {
    var value: AdapterContext?
}

/// Holds a reply between the adapter's task and the blocked host thread.
private final class ReplyBox: @unchecked Sendable {
    var text = ""
    var failed = false
    let done = DispatchSemaphore(value: 0)
}

private func text(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
    guard let pointer, length > 0 else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
}

let adapterCreateEntry: agent_adapter_create_fn = { typePointer, settings, settingsLength, host, errorBuffer, errorCapacity in
    guard let typePointer, let host else { return nil }
    let typeName = String(cString: typePointer)
    guard let entry = ModuleRegistry.shared.adapter(named: typeName) else {
        writeError("this module has no logic adapter \"\(typeName)\"", to: errorBuffer, capacity: errorCapacity)
        return nil
    }
    let bytes = settings.map { Array(UnsafeRawBufferPointer(start: $0, count: settingsLength)) } ?? []
    do {
        let instance = try entry.make(bytes)
        instance.context.value = AdapterContext(host: HostBridge(host))
        return Unmanaged.passRetained(instance).toOpaque()
    } catch {
        writeError("\(error)", to: errorBuffer, capacity: errorCapacity)
        return nil
    }
}

let adapterScoreEntry: agent_adapter_score_fn = { handle, message, length in
    guard let handle else { return -1 }
    let instance = Unmanaged<AdapterInstance>.fromOpaque(handle).takeUnretainedValue()
    return instance.confidence(text(message, length)).map { min(1, max(0, $0)) } ?? -1
}

let adapterRespondEntry: agent_adapter_respond_fn = { handle, message, length, replyContext, reply in
    guard let handle, let reply else { return Int32(AGENT_ERROR) }
    let instance = Unmanaged<AdapterInstance>.fromOpaque(handle).takeUnretainedValue()
    guard let context = instance.context.value else { return Int32(AGENT_ERROR) }
    let question = text(message, length)
    let box = ReplyBox()
    Task {
        do {
            box.text = try await instance.respond(question, context)
        } catch {
            box.text = "\(error)"
            box.failed = true
        }
        box.done.signal()
    }
    box.done.wait()
    var answer = box.text
    answer.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { reply(replyContext, $0.baseAddress, $0.count) }
    }
    return box.failed ? Int32(AGENT_ERROR) : Int32(AGENT_OK)
}

let adapterDestroyEntry: agent_adapter_destroy_fn = { handle in
    guard let handle else { return }
    Unmanaged<AdapterInstance>.fromOpaque(handle).release()
}
