import AgentBase
import AgentLoop
import JSONSchema

/// `memory_get`: one key's value and version (`not_found` when there is none).
package enum MemoryGetCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var key: String
        package var run: String?

        package init(key: String, run: String? = nil) {
            self.key = key
            self.run = run
        }
    }

    package static let name = "memory_get"
    package static let summary = "One key's value and version from shared memory (code `not_found` when there is none)."
    package static let routes: [CommandRoute] = [.get("/api/memory/entry")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object(["key": MemoryCommands.key, "run": MemoryCommands.run], required: ["key"])
    package static let answerSchema = MemoryCommands.entryAnswerSchema
    package static var examples: [(request: JSONValue, answer: MemoryEntryAnswer)] {
        [(["key": "greeting"], MemoryEntryAnswer(json: MemoryCommands.exampleEntry))]
    }
    package static var unavailable: CommandError { MemoryCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: MemoryService, caller: CommandCaller,
                            respond: @escaping (Result<MemoryEntryAnswer, CommandError>) -> Void) {
        host.get(request, scope: MemoryCommands.scope(run: request.run), respond: respond)
    }
}
