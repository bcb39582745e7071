import AgentLoop
import AgentStore
import AgentWork
import Dispatch
import Foundation
import JSONSchema

/// Wiring of shared memory (see ``MemoryStore``): the memory commands, and the memory requests
/// of workers (`context.memory`). Reads run off the loop; writes go through the store's writer;
/// answers come back to the loop.
extension Supervisor {
    /// Opens shared memory: the fleet's when the agent is in one, else in the store (called
    /// whenever either is set).
    func setUpMemory() {
        if let fleet {
            memory = fleet.memoryStore
            return
        }
        guard let store else {
            memory = nil
            return
        }
        do {
            memory = try SQLiteMemoryStore(store: store)
        } catch {
            memory = nil
            logger.error("shared memory: cannot open it in the store (\(error)); memory commands and context.memory answer `unavailable`")
        }
    }

    static let memoryUnavailable: JSONValue = [
        "ok": false, "code": "unavailable",
        "error": "shared memory lives in the store, and the store is off (\"store\": {\"enabled\": false}) or could not be opened",
    ]

    static let memoryMissingKey: JSONValue = ["ok": false, "code": "invalid", "pointer": "/key", "error": "\"key\" is required: the memory key, a string"]

    /// The memory commands, on the loop; answered on the loop.
    func memoryCommand(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let memory else { return respond(Self.memoryUnavailable) }
        let inbox = loop.inbox
        let reply = LoopBound(value: respond)
        Self.answerMemory(request, scope: nil, memory: memory) { answer in
            inbox.post { reply.value(answer) }
        }
    }

    /// Answers a memory request (a command, or a worker's `context.memory` call) off the loop:
    /// `scope` overrides the request's (a worker's run scope), nil: from `run` (absent: agent).
    /// `answer` is called once, on any thread.
    static func answerMemory(_ request: JSONValue, scope given: MemoryScope?, memory: any MemoryStore,
                             answer: @escaping @Sendable (JSONValue) -> Void) {
        let command = request["command"]?.stringValue ?? ""
        let scope = given ?? request["run"]?.stringValue.map(MemoryScope.workflowRun) ?? .agent
        let key = request["key"]?.stringValue
        var expected: Int?
        if let value = request["expected_version"], !value.isNull {
            guard let number = value.numberValue?.intValue, number >= 0 else {
                return answer(["ok": false, "code": "invalid", "pointer": "/expected_version",
                               "error": .string("\"expected_version\" must be an integer, 0 or more; found \(value.serialized())")])
            }
            expected = number
        }
        switch command {
        case "memory_set":
            guard let key else { return answer(Self.memoryMissingKey) }
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
        case "memory_delete":
            guard let key else { return answer(Self.memoryMissingKey) }
            memory.commit(MemoryWrite(scope: scope, key: key, operation: .delete, expectedVersion: expected)) { result in
                switch result {
                case .success(let entry?): answer(["ok": true, "deleted": true, "entry": entry.json])
                case .success(nil): answer(["ok": true, "deleted": false])
                case .failure(let error): answer(error.answer)
                }
            }
        case "memory_get", "memory_list":
            DispatchQueue.global().async {
                do throws(MemoryError) {
                    if command == "memory_get" {
                        guard let key else { return answer(Self.memoryMissingKey) }
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
        default:
            answer(["ok": false, "code": "invalid", "error": .string("not a memory command: \(command)")])
        }
    }
}
