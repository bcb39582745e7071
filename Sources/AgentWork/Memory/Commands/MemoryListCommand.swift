import AgentBase
import AgentLoop
import JSONSchema

/// `memory_list`: a scope's keys in key order, with their values and versions.
package enum MemoryListCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var run: String?
        package var prefix: String?
        package var after: String?
        package var limit: Int?

        package init(run: String? = nil, prefix: String? = nil, after: String? = nil, limit: Int? = nil) {
            self.run = run
            self.prefix = prefix
            self.after = after
            self.limit = limit
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var entries: [JSONValue]
        package var next: String?

        init(_ page: MemoryPage) {
            entries = page.entries.map(\.json)
            next = page.next
        }

        init(entries: [JSONValue], next: String?) {
            self.entries = entries
            self.next = next
        }
    }

    package static let name = "memory_list"
    package static let summary = "Shared memory's keys in key order, with their values and versions: agent-wide, or a workflow run's (`run`); only those starting with `prefix`; page with `after`."
    package static let routes: [CommandRoute] = [.get("/api/memory")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "run": MemoryCommands.run,
        "prefix": ["type": "string", "maxLength": .number(JSONNumber(MemoryLimits.keyBytes)), "pattern": .string(MemoryLimits.noControlCharacters),
                   "description": "Only keys starting with this (keys have no control characters)."],
        "after": ["type": "string", "maxLength": .number(JSONNumber(MemoryLimits.keyBytes)), "pattern": .string(MemoryLimits.noControlCharacters),
                  "description": "Only keys after this one (the `next` of the previous page; keys have no control characters)."],
        "limit": ["type": "integer", "minimum": 1, "maximum": .number(JSONNumber(MemoryLimits.listEntries)), "default": 100],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "entries": ["type": "array", "items": MemoryCommands.entrySchema],
        "next": ["type": "string", "description": "More keys follow: pass as `after`."],
    ], required: ["ok", "entries"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(entries: [MemoryCommands.exampleEntry], next: nil)),
         (["prefix": "gr", "limit": 1, "run": "w1"], Answer(entries: [MemoryCommands.exampleEntry], next: "greeting"))]
    }
    package static var unavailable: CommandError { MemoryCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: MemoryService, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.list(request, scope: MemoryCommands.scope(run: request.run), respond: respond)
    }
}
