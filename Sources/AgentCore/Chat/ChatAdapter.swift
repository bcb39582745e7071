import AgentModuleABI
import Foundation
import JSONSchema

/// A message the chatbot answers, as the supervisor delivers it.
struct ChatMessage {
    var id: String
    var conversation: String
    var text: String
    /// The processes' status at the time (for the status adapter).
    var processes: [JSONValue]
    /// What the sender passed along with the message (a user id, a channel…), for adapters
    /// that answer from it (the `rest` adapter forwards it).
    var context: JSONValue? = nil
    /// Only this adapter answers (a workflow's chat step that names one), whatever the scores.
    var adapter: String? = nil
    /// Who sent it, as the supervisor authenticated them: `{"front", "user", "role"}` (the
    /// `llm` adapter's tool calls run as them; the supervisor checks, not the adapter).
    var caller: JSONValue? = nil
    /// `summary`: the relay asks the named `llm` adapter to sum up a transcript (the text).
    var purpose: String? = nil
    /// When the sender stops waiting, in seconds on CLOCK_MONOTONIC (the relay's deadline):
    /// a message still queued then is not answered, and no adapter works on one past it.
    var deadline: Double? = nil
    /// Recognised from a recording (`chat.voice`): a grammar matches unrelated speech to one of
    /// its commands, so what changes something is asked again before it is done.
    var spoken = false

    /// Now on the clock of ``deadline``.
    static func now() -> Double { Double(TaskExecutor.nanoseconds(CLOCK_MONOTONIC)) / 1e9 }

    /// The seconds its sender waits on (nil: no deadline).
    var secondsLeft: Double? { deadline.map { $0 - Self.now() } }
}

/// What the chatbot asks of an adapter, built-in or from a module.
protocol ChatAdapter: AnyObject {
    var name: String { get }
    var summary: String { get }
    var examples: [String] { get }
    /// A confidence of its own, or nil to be scored from the examples.
    func confidence(for message: ChatMessage) -> Double?
    func respond(to message: ChatMessage) -> String
}

/// An adapter from a module library, through the module ABI.
final class ModuleChatAdapter: ChatAdapter {
    let name: String
    let summary: String
    let examples: [String]
    private let module: LoadedModule
    private let handle: UnsafeMutableRawPointer

    init(name: String, type: ModuleManifest.ProcessType, module: LoadedModule, settings: JSONObject, host: UnsafePointer<agent_host_api>) throws {
        self.name = name
        summary = type.description
        examples = type.usageExamples
        self.module = module
        guard let create = module.entry.pointee.adapter_create else {
            throw ChatError("module \(module.module) declares \(type.type) but has no adapter entry points")
        }
        var error = [CChar](repeating: 0, count: 2048)
        let json = JSONValue.object(settings).serialized()
        let created = type.type.withCString { typePointer in
            json.withCString { create(typePointer, $0, strlen($0), host, &error, error.count) }
        }
        guard let created else {
            throw ChatError("adapter \(name) refused its settings: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        handle = created
    }

    func confidence(for message: ChatMessage) -> Double? {
        guard let score = module.entry.pointee.adapter_score else { return nil }
        let value = message.text.withCString { score(handle, $0, strlen($0)) }
        return value < 0 ? nil : value
    }

    func respond(to message: ChatMessage) -> String {
        guard let respond = module.entry.pointee.adapter_respond else { return "" }
        final class Reply { var text = "" }
        let reply = Reply()
        let context = Unmanaged.passUnretained(reply).toOpaque()
        _ = message.text.withCString { text in
            respond(handle, text, strlen(text), context) { context, bytes, length in
                guard let context, let bytes else { return }
                Unmanaged<Reply>.fromOpaque(context).takeUnretainedValue().text =
                    String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
            }
        }
        return reply.text
    }
}

/// Why the chatbot cannot use an adapter.
struct ChatError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
