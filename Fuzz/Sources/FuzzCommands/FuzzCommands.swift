@testable import AgentBase
@testable import AgentCommands
@testable import AgentLoop
@testable import AgentSupervision
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
@testable import AgentRuntime

/// The command layer on arbitrary requests: the first byte picks a command of the catalog, the
/// rest is its fields (a JSON object), as any front hands them over. The catalog's request
/// schema (what the HTTP front checks first) must compile and report every error at a pointer
/// into the request; the command itself, run on an agent with tasks, schedules and workflows
/// (nothing is spawned: the tasks' module has no worker), answers at most once, and
/// every refusal is a structured error: `ok: false`, an `error` text, a `code` of the
/// documented ones and, if any, a JSON pointer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommands(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = input.first, case .object(let fields)? = try? JSONValue.parse(input.dropFirst()) else { return 0 }
    let index = Int(first) % CommandCatalog.all.count
    let command = CommandCatalog.all[index]
    // The one agent serves every input (a supervisor is never freed: its loop's handlers hold
    // it), so it is not stopped.
    guard command.name != "stop" else { return 0 }
    guard let validator = validators[index] else { fatalError("the request schema of \(command.name) does not compile") }
    for error in validator.validate(.object(fields)) {
        guard !error.message.isEmpty, error.instanceLocation.isEmpty || error.instanceLocation.utf8.first == UInt8(ascii: "/") else {
            fatalError("\(command.name): an unstructured schema error \(error) for \(JSONValue.object(fields).serialized())")
        }
    }
    var request = fields
    for (key, value) in command.fixed { request[key] = value }
    request["command"] = .string(command.name)
    let answers: [JSONValue]
    switch CommandRegistry.standard.check(.object(request)) {
    case .failure(let refusal):
        answers = [refusal.json]
    case .success(let checked):
        answers = supervisor.inbox.isolated {
            var answers: [JSONValue] = []
            supervisor.execute(checked, caller: CommandCenter.Caller(front: "http", user: "fuzz")) { answers.append($0) }
            // Answers that come through the loop's inbox (reads made off the loop) come in a turn.
            for _ in 0..<3 where answers.isEmpty { supervisor.loop.runOnce(maxWait: 0) }
            return answers
        }
    }
    guard answers.count <= 1 else { fatalError("\(answers.count) answers to \(JSONValue.object(request).serialized())") }
    if let answer = answers.first, let problem = problem(answer) {
        fatalError("\(problem): \(answer.serialized()) to \(JSONValue.object(request).serialized())")
    }
    return 0
}

/// What is wrong with an answer's shape, if anything. A pointer's `/` is read as a byte: a
/// property name may begin with a combining mark, which `hasPrefix` would join to the `/`.
func problem(_ answer: JSONValue) -> String? {
    guard let ok = answer["ok"]?.boolValue else { return "an answer without \"ok\"" }
    guard !ok else { return nil }
    guard let error = answer["error"]?.stringValue, !error.isEmpty else { return "a refusal without an \"error\" text" }
    guard let code = answer["code"]?.stringValue, codes.contains(code) else { return "a refusal without a documented \"code\"" }
    if let pointer = answer["pointer"] {
        guard let text = pointer.stringValue, text.isEmpty || text.utf8.first == UInt8(ascii: "/") else { return "a refusal whose \"pointer\" is no JSON pointer" }
    }
    return nil
}

let codes = Set(CommandDescription.errorAnswer["properties"]?["code"]?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? [])
let validators = CommandCatalog.all.map { try? JSONSchemaValidator(schema: $0.request) }
let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

/// Tasks (a module type with no module: a run fails at once, nothing starts), a schedule and
/// workflows with every kind of step the commands look at.
let fixture = AgentSettings(json: try! JSONValue.parse(#"""
{"tasks": {
   "job": {"type": "fuzzmod.job", "input": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}}},
   "free": {"type": "fuzzmod.job"}},
 "schedules": {"nightly": {"cron": "0 3 * * *", "task": "job", "input": {"n": 1}},
               "often": {"every": 60, "workflow": "flow"}},
 "workflows": {
   "flow": {"input": {"type": "object"}, "steps": [
     {"id": "first", "task": "job", "input": {"n": "{{input.n}}"}},
     {"id": "ask", "approval": {"approvers": ["admin"], "message": "go?"}},
     {"id": "wait", "wait_event": {"type": "fuzz.done", "timeout": 60}},
     {"id": "branch", "condition": {"when": {"type": "object"}, "then": [{"id": "note", "set": {"x": 1}}]}}]}}}
"""#), file: "/nonexistent/settings.json")

// Made and driven by the fuzzer's one thread (the loop's).
let supervisor: Supervisor = {
    let supervisor = Supervisor.make(configuration: SupervisorConfiguration(workerPath: "/nonexistent/agent-worker", environment: [:]),
                                     processes: [], console: ConsoleOutput(json: true, showEvents: false, fd: -1), logger: logger)
    supervisor.inbox.isolated {
        let work = WorkHost.Definitions(tasks: fixture.tasks, schedules: fixture.schedules, workflows: fixture.workflows, roles: ["admin": "admin"])
        supervisor.work.setUp(work, agentDirectory: "/nonexistent", notifications: nil, containment: nil)
    }
    return supervisor
}()
