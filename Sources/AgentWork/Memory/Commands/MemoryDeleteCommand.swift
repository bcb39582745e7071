import AgentBase
import AgentLoop
import JSONSchema

/// `memory_delete`: deletes a key (no error when there is none: `deleted` says).
package enum MemoryDeleteCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var key: String
        package var run: String?
        package var expectedVersion: Int?

        package init(key: String, run: String? = nil, expectedVersion: Int? = nil) {
            self.key = key
            self.run = run
            self.expectedVersion = expectedVersion
        }

        enum CodingKeys: String, CodingKey {
            case key, run
            case expectedVersion = "expected_version"
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var deleted: Bool
        package var entry: JSONValue?

        init(_ removed: MemoryEntry?) {
            deleted = removed != nil
            entry = removed?.json
        }

        init(entry: JSONValue?) {
            deleted = entry != nil
            self.entry = entry
        }
    }

    package static let name = "memory_delete"
    package static let summary = "Deletes a key of shared memory (no error when there is none: `deleted` says). With `expected_version`, only at that version."
    package static let routes: [CommandRoute] = [.delete("/api/memory/entry")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object(
        ["key": MemoryCommands.key, "run": MemoryCommands.run, "expected_version": MemoryCommands.expectedVersion], required: ["key"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "deleted": ["type": "boolean"], "entry": MemoryCommands.entrySchema,
    ], required: ["ok", "deleted"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["key": "greeting", "expected_version": 2], Answer(entry: MemoryCommands.exampleEntry)), (["key": "gone"], Answer(entry: nil))]
    }
    package static var unavailable: CommandError { MemoryCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: MemoryService, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.delete(request, scope: MemoryCommands.scope(run: request.run), respond: respond)
    }
}
