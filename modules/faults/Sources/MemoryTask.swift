import AgentModuleKit
import Foundation

/// A task handler that uses shared memory (`context.memory`), to test it through a real
/// executor worker: `increment` adds one to an integer key `times` times by compare-and-set
/// (retrying on conflicts), `read` reads a key, `delete` deletes it; `scope` `run` uses the
/// workflow run's scope (refused for a run that is no workflow step).
struct MemoryTask: TaskHandler {
    struct Input: Decodable, Sendable {
        var op: String
        var key: String
        var times: Int
        var scope: String
    }

    struct Output: Encodable, Sendable {
        var value: Int?
        var version: Int?
        var conflicts: Int
        /// Reads tried again because the store could not answer them then.
        var unavailable: Int = 0
        var deleted: Bool?
        var error: String?
    }

    static let typeName = "memory_task"
    static let description = "Reads and writes shared memory (increment by compare-and-set, read, delete) to test context.memory."
    static var settingsSchema: Schema { .object([:]) }
    static var inputSchema: Schema {
        .object([
            "op": .string(oneOf: ["increment", "read", "delete"], default: "read", description: "What to do with the key."),
            "key": .string(default: "counter", description: "The memory key."),
            "times": .integer(minimum: 0, default: 1, description: "increment: how many times."),
            "scope": .string(oneOf: ["agent", "run"], default: "agent", description: "agent-wide, or the workflow run's scope."),
        ])
    }

    init(settings: NoSettings) {}

    func run(input: Input, context: TaskContext) async throws -> Output {
        let memory = context.memory
        let scope: SharedMemory.Scope = input.scope == "run" ? .workflowRun : .agent
        var conflicts = 0, unavailable = 0
        // A read the store could not answer in its time (a fleet's database on a loaded
        // machine) is tried again: a read changes nothing, so no increment is lost or doubled.
        // A failed write is not: it may have been made.
        func entry() async throws -> SharedMemory.Entry? {
            let deadline = Date().addingTimeInterval(60)
            while true {
                do {
                    return try memory.entry(input.key, scope: scope)
                } catch let error as ProcessContextError where error.code == .storeUnavailable && Date() < deadline {
                    unavailable += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        do {
            switch input.op {
            case "increment":
                var done = 0
                while done < input.times {
                    let current = try await entry()
                    let value = try current?.decode(Int.self) ?? 0
                    do {
                        try memory.set(input.key, value + 1, expectedVersion: current?.version ?? 0, scope: scope)
                        done += 1
                    } catch let error as ProcessContextError where error.code == .memoryConflict {
                        conflicts += 1
                    }
                }
                let last = try await entry()
                return Output(value: try last?.decode(Int.self), version: last?.version, conflicts: conflicts, unavailable: unavailable)
            case "delete":
                return Output(conflicts: 0, deleted: try memory.delete(input.key, scope: scope))
            default:
                let entry = try memory.entry(input.key, scope: scope)
                return Output(value: try entry?.decode(Int.self), version: entry?.version, conflicts: 0)
            }
        } catch let error as ProcessContextError {
            return Output(conflicts: conflicts, unavailable: unavailable, error: "\(error.code): \(error.description)")
        }
    }
}
