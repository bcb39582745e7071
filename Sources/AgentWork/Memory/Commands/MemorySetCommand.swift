import AgentBase
import AgentLoop
import JSONSchema

/// `memory_set`: writes a JSON value at a key; with `expected_version`, a compare-and-set.
package enum MemorySetCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var key: String
        package var run: String?
        package var value: JSONValue
        package var expectedVersion: Int?

        package init(key: String, run: String? = nil, value: JSONValue, expectedVersion: Int? = nil) {
            self.key = key
            self.run = run
            self.value = value
            self.expectedVersion = expectedVersion
        }

        enum CodingKeys: String, CodingKey {
            case key, run, value
            case expectedVersion = "expected_version"
        }
    }

    package static let name = "memory_set"
    package static let summary = "Writes a JSON value (at most 256 KiB) at a key of shared memory; the key's version goes up by one. With `expected_version`, a compare-and-set."
    package static let routes: [CommandRoute] = [CommandRoute("PUT", "/api/memory/entry")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "key": MemoryCommands.key, "run": MemoryCommands.run,
        "value": ["description": "Any JSON value, at most 256 KiB as compact JSON."],
        "expected_version": MemoryCommands.expectedVersion,
    ], required: ["key", "value"])
    package static let answerSchema = MemoryCommands.entryAnswerSchema
    package static var examples: [(request: JSONValue, answer: MemoryEntryAnswer)] {
        [(["key": "greeting", "value": ["text": "hello"], "expected_version": 1], MemoryEntryAnswer(json: MemoryCommands.exampleEntry)),
         (["key": "empty", "value": nil, "run": "w1"], MemoryEntryAnswer(json: MemoryCommands.exampleEntry))]
    }
    package static var unavailable: CommandError { MemoryCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: MemoryService, caller: CommandCaller,
                            respond: @escaping (Result<MemoryEntryAnswer, CommandError>) -> Void) {
        host.set(request, scope: MemoryCommands.scope(run: request.run), respond: respond)
    }
}
