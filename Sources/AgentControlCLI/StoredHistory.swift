import AgentBase
import AgentCLI
import AgentRuntime
import AgentStore
import AgentWork
import Foundation
import JSONSchema

/// The answers of the commands that read history (`task runs`, `task show`, `workflow runs`,
/// `workflow show`, `schedule history`) when the agent is not running: the JSON the agent
/// answers, read from its store (read-only), as `events` and `history` always read it. A note
/// on stderr says where the answer comes from.
enum StoredHistory {
    /// Makes the answer from the store and the settings that name it.
    typealias Read = (StoreReader, AgentSettings) throws -> JSONValue

    /// `read`'s answer from the store of the settings in `settingsFile`; nil when there is no
    /// settings file there (the caller says the agent is not running).
    static func answer(_ read: Read, settingsFile: String) throws -> JSONValue? {
        guard FileManager.default.fileExists(atPath: settingsFile) else { return nil }
        let (reader, settings) = try openStore(settingsFile: settingsFile)
        FileHandle.standardError.write(Data("note: the agent is not running; this is what its store \(reader.path) holds\n".utf8))
        do {
            return try read(reader, settings)
        } catch {
            throw CommandFailure.report("cannot read the store \(reader.path): \(error)")
        }
    }

    static func taskRuns(_ filter: RunFilter) -> Read {
        { reader, _ in
            let page = try reader.runs(filter)
            return try JSONValueEncoder().encode(TaskRunsCommand.Answer(runs: page.map { RunListing.shown($0.run.json, omitted: $0.omitted) },
                                                                        stored: true, cut: page.cut))
        }
    }

    static func taskRun(_ id: String) -> Read {
        { reader, _ in
            guard let run = try reader.run(id: id) else { return notFound("no run with id \"\(id)\"; `agent-control task runs` lists them") }
            return try JSONValueEncoder().encode(TaskShowAnswer(run, stored: try reader.attempts(of: id)))
        }
    }

    static func workflowRuns(_ filter: WorkflowRunFilter) -> Read {
        { reader, _ in
            let page = try reader.workflowRuns(filter)
            return try JSONValueEncoder().encode(WorkflowRunsCommand.Answer(runs: page.map { RunListing.shown($0.run.json, omitted: $0.omitted) },
                                                                            stored: true, cut: page.cut))
        }
    }

    static func workflowRun(_ id: String) -> Read {
        { reader, _ in
            guard let found = try reader.workflowRun(id: id) else {
                return notFound("no workflow run with id \"\(id)\"; `agent-control workflow runs` lists them")
            }
            return ["ok": true, "run": found.run.json, "steps": .array(found.steps.map(\.json))]
        }
    }

    /// In the schedule's own time zone, as the agent answers.
    static func scheduleHistory(_ name: String, limit: Int) -> Read {
        { reader, settings in
            let schedule = settings.schedules.first(where: { $0.name == name })
            let lines = try reader.scheduleHistory(name, limit: limit)
            // A removed schedule's history stays, shown in UTC (its zone went with it).
            guard schedule != nil || !lines.isEmpty else {
                let names = settings.schedules.map(\.name).sorted()
                return notFound("no schedule named \"\(name)\"\(Suggestions.hint(for: name, in: names)); schedules: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
            }
            let zone = schedule?.timeZone ?? TimeZone(identifier: "UTC")!
            return ["ok": true, "stored": true, "history": .array(lines.map { $0.entry.json(result: $0.result, zone: zone) })]
        }
    }

    /// A refusal, as the agent's (exit status 1).
    private static func notFound(_ message: String) -> JSONValue {
        ["ok": false, "code": "not_found", "error": .string(message)]
    }
}
