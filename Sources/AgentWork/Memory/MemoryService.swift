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
///
/// Loop thread only.
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

    static let unavailable: JSONValue = [
        "ok": false, "code": "unavailable",
        "error": "shared memory lives in the store, and the store is off (\"store\": {\"enabled\": false}) or could not be opened",
    ]

    static let missingKey: JSONValue = ["ok": false, "code": "invalid", "pointer": "/key", "error": "\"key\" is required: the memory key, a string"]

    /// The memory commands, on the loop; answered on the loop.
    package func answerCommand(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let store else { return respond(Self.unavailable) }
        let inbox = loop.inbox
        let reply = LoopBound(value: respond)
        Self.answer(request, scope: nil, memory: store) { answer in
            inbox.post { reply.value(answer) }
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
        guard let store else { return replyToWorker(process, pid: process.pid, status: 0, Array(Self.unavailable.serialized().utf8)) }
        var scope = MemoryScope.agent
        if request["scope"]?.stringValue == "run" {
            guard let run = runScope(token, process) else {
                let refusal: JSONValue = ["ok": false, "code": "invalid",
                                          "error": "scope .workflowRun is only for a task handler's run that is a step of a workflow run; use the agent-wide scope"]
                return replyToWorker(process, pid: process.pid, status: 0, Array(refusal.serialized().utf8))
            }
            scope = .workflowRun(run)
        }
        let inbox = loop.inbox
        let bound = LoopBound(value: (self, process))
        let pid = process.pid
        Self.answer(request, scope: scope, memory: store) { answer in
            let bytes = Array(answer.serialized().utf8)
            inbox.post { bound.value.0.replyToWorker(bound.value.1, pid: pid, status: 0, bytes) }
        }
    }

    /// Sends the answer to the worker that asked (not to a worker started since in its place).
    private func replyToWorker(_ process: SupervisedProcess, pid: pid_t, status: UInt8, _ bytes: [UInt8]) {
        guard process.hasWorker, process.pid == pid else { return }
        reply(process, [status] + bytes)
    }

    /// Answers a memory request (a command, or a worker's `context.memory` call) off the loop:
    /// `scope` overrides the request's (a worker's run scope), nil: from `run` (absent: agent).
    /// `answer` is called once, on any thread.
    static func answer(_ request: JSONValue, scope given: MemoryScope?, memory: any MemoryStore,
                       answer: @escaping @Sendable (JSONValue) -> Void) {
        let command = request["command"]?.stringValue ?? ""
        let scope = given ?? request["run"]?.stringValue.map(MemoryScope.workflowRun) ?? .agent
        var expected: Int?
        if let value = request["expected_version"], !value.isNull {
            guard let number = value.numberValue?.intValue, number >= 0 else {
                return answer(["ok": false, "code": "invalid", "pointer": "/expected_version",
                               "error": .string("\"expected_version\" must be an integer, 0 or more; found \(value.serialized())")])
            }
            expected = number
        }
        switch command {
        case "memory_set", "memory_delete":
            write(request, scope: scope, expected: expected, memory: memory, answer: answer)
        case "memory_get", "memory_list":
            DispatchQueue.global().async { read(request, scope: scope, memory: memory, answer: answer) }
        default:
            answer(["ok": false, "code": "invalid", "error": .string("not a memory command: \(command)")])
        }
    }

    /// `memory_set` and `memory_delete`: committed by the store's writer.
    private static func write(_ request: JSONValue, scope: MemoryScope, expected: Int?, memory: any MemoryStore,
                              answer: @escaping @Sendable (JSONValue) -> Void) {
        guard let key = request["key"]?.stringValue else { return answer(missingKey) }
        guard request["command"] == "memory_set" else {
            memory.commit(MemoryWrite(scope: scope, key: key, operation: .delete, expectedVersion: expected)) { result in
                switch result {
                case .success(let entry?): answer(["ok": true, "deleted": true, "entry": entry.json])
                case .success(nil): answer(["ok": true, "deleted": false])
                case .failure(let error): answer(error.answer)
                }
            }
            return
        }
        guard let value = request["value"] else {
            return answer(["ok": false, "code": "invalid", "pointer": "/value", "error": "\"value\" is required: any JSON value"])
        }
        memory.commit(MemoryWrite(scope: scope, key: key, operation: .put(value), expectedVersion: expected)) { result in
            switch result {
            case .success(let entry?): answer(["ok": true, "entry": entry.json])
            case .success(nil): answer(["ok": false, "code": "unavailable", "error": "the store wrote no entry"])
            case .failure(let error): answer(error.answer)
            }
        }
    }

    /// `memory_get` and `memory_list`, on a thread of their own (reads block).
    private static func read(_ request: JSONValue, scope: MemoryScope, memory: any MemoryStore, answer: @Sendable (JSONValue) -> Void) {
        do throws(MemoryError) {
            if request["command"] == "memory_get" {
                guard let key = request["key"]?.stringValue else { return answer(missingKey) }
                guard let entry = try memory.get(key, scope: scope) else {
                    return answer(["ok": false, "code": "not_found", "key": .string(key), "scope": .string(scope.description),
                                   "error": .string("no memory key \"\(key)\" in \(scope)")])
                }
                answer(["ok": true, "entry": entry.json])
            } else {
                let page = try memory.list(scope: scope, prefix: request["prefix"]?.stringValue ?? "", after: request["after"]?.stringValue,
                                           limit: request["limit"]?.numberValue?.intValue ?? 100)
                var object: JSONObject = ["ok": true, "entries": .array(page.entries.map(\.json))]
                if let next = page.next { object["next"] = .string(next) }
                answer(.object(object))
            }
        } catch {
            answer(error.answer)
        }
    }
}
