import AgentBase
import AgentCore
import AgentLoop
import AgentSupervision
import Dispatch
import Foundation
import JSONSchema
import Logging

/// Shared memory (see ``MemoryStore``) as the supervisor owns it: the memory commands of every
/// front, and the memory requests of workers (`context.memory` in the SDK: a `memory` frame
/// answered with a `memoryResult` frame). Reads run off the loop; writes go through the store's
/// writer; answers come back to the loop.
@LoopActor
package final class MemoryService {
    /// The fleet's memory when the agent is in one, else the store's; nil without either.
    package private(set) var store: (any MemoryStore)?
    private let loop: EventLoop
    private let logger: Logger
    /// Queues a `memoryResult` frame's body for a worker (written at the end of the turn).
    private let reply: (SupervisedProcess, [UInt8]) -> Void
    /// The workflow run whose scope a task handler's run (by its token in the worker) has.
    package var runScope: (_ token: UInt64, _ process: SupervisedProcess) -> String? = { _, _ in nil }

    package init(loop: EventLoop, logger: Logger, reply: @escaping (SupervisedProcess, [UInt8]) -> Void) {
        self.loop = loop
        self.logger = logger
        self.reply = reply
    }

    /// Opens shared memory: the fleet's when the agent is in one, else in `storage`.
    package func open(fleet: (any FleetBackend)?, storage: (any WorkStorage)?) {
        if let fleet {
            store = fleet.memoryStore
            return
        }
        guard let storage else {
            store = nil
            return
        }
        do {
            store = try storage.openMemoryStore()
        } catch {
            store = nil
            logger.error("shared memory: cannot open it in the store (\(error)); memory commands and context.memory answer `unavailable`")
        }
    }

    /// A worker's `context.memory` request (token, then the command as JSON), answered with a
    /// `memoryResult` frame to the same worker once the store has answered.
    package func answerFrame(_ body: UnsafeRawBufferPointer, from process: SupervisedProcess) {
        guard body.count >= 8, let request = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: body[8...])),
              request["command"]?.stringValue?.hasPrefix("memory_") == true else {
            return replyToWorker(process, pid: process.pid, status: 1, Array("the memory request is not a memory command as JSON".utf8))
        }
        let token = UInt64(littleEndian: body.loadUnaligned(as: UInt64.self))
        guard let store else { return replyToWorker(process, pid: process.pid, status: 0, MemoryCommands.unavailable.json.serializedBytes()) }
        var scope = MemoryScope.agent
        if request["scope"]?.stringValue == "run" {
            guard let run = runScope(token, process) else {
                let refusal: JSONValue = ["ok": false, "code": "invalid",
                                          "error": "scope .workflowRun is only for a task handler's run that is a step of a workflow run; use the agent-wide scope"]
                return replyToWorker(process, pid: process.pid, status: 0, refusal.serializedBytes())
            }
            scope = .workflowRun(run)
        }
        let inbox = loop.inbox
        let pid = process.pid
        Self.answer(request, scope: scope, memory: store) { answer in
            let bytes = answer.serializedBytes()
            inbox.post { self.replyToWorker(process, pid: pid, status: 0, bytes) }
        }
    }

    /// Sends the answer to the worker that asked (not to a worker started since in its place).
    private func replyToWorker(_ process: SupervisedProcess, pid: pid_t, status: UInt8, _ bytes: [UInt8]) {
        guard process.hasWorker, process.pid == pid else { return }
        reply(process, [status] + bytes)
    }

    /// A worker's memory request, decoded as the command it names with the scope the worker
    /// has: `answer` gets the command's answer or refusal as JSON, on any thread.
    nonisolated static func answer(_ request: JSONValue, scope: MemoryScope, memory: any MemoryStore,
                       answer: @escaping @Sendable (JSONValue) -> Void) {
        let decoder = JSONValueDecoder()
        do {
            switch request["command"]?.stringValue {
            case "memory_get"?:
                let request = try decoder.decode(MemoryGetCommand.Request.self, from: request)
                DispatchQueue.global().async { answer(Self.json(Self.get(request.key, scope: scope, memory: memory))) }
            case "memory_list"?:
                let request = try decoder.decode(MemoryListCommand.Request.self, from: request)
                DispatchQueue.global().async { answer(Self.json(Self.list(request, scope: scope, memory: memory))) }
            case "memory_set"?:
                let request = try decoder.decode(MemorySetCommand.Request.self, from: request)
                Self.set(request, scope: scope, memory: memory) { answer(Self.json($0)) }
            case "memory_delete"?:
                let request = try decoder.decode(MemoryDeleteCommand.Request.self, from: request)
                Self.delete(request, scope: scope, memory: memory) { answer(Self.json($0)) }
            case let other:
                answer(CommandError.invalid("not a memory command: \(other ?? "")").json)
            }
        } catch {
            answer(JSONValueDecoder.refusal(of: error).json)
        }
    }

    /// A memory command's result as a worker gets it.
    nonisolated private static func json<T: Encodable>(_ result: Result<T, CommandError>) -> JSONValue {
        switch result {
        case .success(let value): (try? JSONValueEncoder().encode(value)) ?? CommandError(.failed, "the answer could not be encoded").json
        case .failure(let refusal): refusal.json
        }
    }

    nonisolated private static func json<T: Encodable>(_ result: Result<T, MemoryError>) -> JSONValue { json(result.mapError(\.refusal)) }

    // MARK: The commands (``MemoryCommands``): on the loop, answered on the loop.

    /// `memory_list`: read on a thread of its own (reads block).
    package func list(_ request: MemoryListCommand.Request, scope: MemoryScope,
                      respond: @escaping (Result<MemoryListCommand.Answer, CommandError>) -> Void) {
        offLoop(respond) { memory, done in DispatchQueue.global().async { done(Self.list(request, scope: scope, memory: memory).mapError(\.refusal)) } }
    }

    /// `memory_get`: read on a thread of its own.
    package func get(_ request: MemoryGetCommand.Request, scope: MemoryScope,
                     respond: @escaping (Result<MemoryEntryAnswer, CommandError>) -> Void) {
        offLoop(respond) { memory, done in DispatchQueue.global().async { done(Self.get(request.key, scope: scope, memory: memory)) } }
    }

    /// `memory_set`: committed by the store's writer.
    package func set(_ request: MemorySetCommand.Request, scope: MemoryScope,
                     respond: @escaping (Result<MemoryEntryAnswer, CommandError>) -> Void) {
        offLoop(respond) { memory, done in Self.set(request, scope: scope, memory: memory) { done($0.mapError(\.refusal)) } }
    }

    /// `memory_delete`: committed by the store's writer.
    package func delete(_ request: MemoryDeleteCommand.Request, scope: MemoryScope,
                        respond: @escaping (Result<MemoryDeleteCommand.Answer, CommandError>) -> Void) {
        offLoop(respond) { memory, done in Self.delete(request, scope: scope, memory: memory) { done($0.mapError(\.refusal)) } }
    }

    /// Runs `work` on the store (refused when there is none); its result comes back to the loop.
    private func offLoop<T: Sendable>(_ respond: @escaping (Result<T, CommandError>) -> Void,
                                      _ work: (any MemoryStore, @escaping @Sendable (Result<T, CommandError>) -> Void) -> Void) {
        guard let store else { return respond(.failure(MemoryCommands.unavailable)) }
        let inbox = loop.inbox
        let reply = LoopOwned(respond)
        work(store) { answer in inbox.post { reply.value(answer) } }
    }

    /// A key's entry; `not_found` (with the key and scope) when there is none.
    nonisolated private static func get(_ key: String, scope: MemoryScope, memory: any MemoryStore) -> Result<MemoryEntryAnswer, CommandError> {
        do throws(MemoryError) {
            guard let entry = try memory.get(key, scope: scope) else {
                return .failure(CommandError(.notFound, "no memory key \"\(key)\" in \(scope)", details: ["key": .string(key), "scope": .string(scope.description)]))
            }
            return .success(MemoryEntryAnswer(entry))
        } catch {
            return .failure(error.refusal)
        }
    }

    nonisolated private static func list(_ request: MemoryListCommand.Request, scope: MemoryScope, memory: any MemoryStore) -> Result<MemoryListCommand.Answer, MemoryError> {
        Result { () throws(MemoryError) in
            MemoryListCommand.Answer(try memory.list(scope: scope, prefix: request.prefix ?? "", after: request.after, limit: request.limit ?? 100))
        }
    }

    nonisolated private static func set(_ request: MemorySetCommand.Request, scope: MemoryScope, memory: any MemoryStore,
                            done: @escaping @Sendable (Result<MemoryEntryAnswer, MemoryError>) -> Void) {
        let write = MemoryWrite(scope: scope, key: request.key, operation: .put(request.value), expectedVersion: request.expectedVersion)
        memory.commit(write) { result in
            switch result {
            case .success(let entry?): done(.success(MemoryEntryAnswer(entry)))
            case .success(nil): done(.failure(MemoryError(.unavailable, "the store wrote no entry", key: nil, scope: nil)))
            case .failure(let error): done(.failure(error))
            }
        }
    }

    nonisolated private static func delete(_ request: MemoryDeleteCommand.Request, scope: MemoryScope, memory: any MemoryStore,
                               done: @escaping @Sendable (Result<MemoryDeleteCommand.Answer, MemoryError>) -> Void) {
        let write = MemoryWrite(scope: scope, key: request.key, operation: .delete, expectedVersion: request.expectedVersion)
        memory.commit(write) { result in done(result.map(MemoryDeleteCommand.Answer.init)) }
    }
}
