import AgentBase
import AgentCommands
import AgentStore
import AgentWork
import Foundation
import JSONSchema

/// Wiring of the workflows: the ``WorkflowEngine`` does the work; the supervisor creates it
/// after the tasks, forwards commands, reloads, the events it waits for and the stop.
extension Supervisor {
    /// Creates the engine with the settings' workflows and resumes the runs a previous life of
    /// the agent left unfinished (read from the store now; resumed once the loop runs). Call
    /// after ``setUpTasks(_:executors:assignment:agentDirectory:notifications:)`` and before
    /// ``setUpSchedules(_:)`` (a schedule may start workflows). `roles`: the HTTP users and tokens
    /// with their role, who may answer approvals (``SettingsReport/httpRoles``).
    public func setUpWorkflows(_ definitions: [WorkflowDefinition], roles: [String: String]) {
        guard let tasks else { return }
        var workflowStore: (any WorkflowStore)?
        var previous: [(run: WorkflowRun, steps: [WorkflowStepRecord])] = []
        var shared: FleetWorkflowState?
        if let fleet {
            // The fleet's runs: taken (this agent's of an earlier life, and any whose lease
            // lapsed) once the engine joins, not loaded here.
            let store = fleet.workflowStore, holder = fleet.settings.agentID
            do {
                let token = try StoreWait.result { try await store.startToken(holder: holder) }
                shared = FleetWorkflowState(store: store, holder: holder, token: token, lease: fleet.settings.lease, poll: fleet.settings.poll)
                workflowStore = store
            } catch {
                logger.error("workflows: cannot reach the fleet's store (\(error)); runs are kept in memory only")
            }
        } else if let store {
            do {
                let sqlite = try SQLiteWorkflowStore(store: store)
                previous = try sqlite.loadUnfinishedNow()
                workflowStore = sqlite
            } catch {
                logger.error("workflows: cannot read their runs from the store (\(error)); runs are kept in memory only")
            }
        }
        let engine = WorkflowEngine(loop: loop, store: workflowStore, tasks: tasks, logger: logger)
        engine.publish = { [unowned self] type, payload, cascade in publishWorkEvent(type, payload, source: "workflows", cascade: cascade) }
        engine.emit = { [unowned self] type, payload, workflow, cascade in
            publishWorkEvent(type, payload, source: "workflow:" + workflow, cascade: cascade)
        }
        engine.ask = { [unowned self] text, adapter, conversation, answer in
            var request: JSONObject = ["command": "chat", "text": .string(text), "conversation": .string(conversation)]
            if let adapter { request["adapter"] = .string(adapter) }
            handleControl(.object(request)) { reply in
                if reply["ok"]?.boolValue == true, let text = reply["text"]?.stringValue {
                    answer(.success(text))
                } else {
                    answer(.failure(WorkflowError(code: "chat", message: reply["error"]?.stringValue ?? "the chatbot did not answer")))
                }
            }
        }
        engine.roles = roles
        engine.wantedTypesChanged = { [unowned self] in refreshTriggers() }
        if let memory {
            // `set` steps' memory and `${memory:…}` references: the agent's scope, or the run's.
            engine.memoryRead = { key, run in try? memory.get(key, scope: run.map { .workflowRun($0) } ?? .agent)?.value }
            engine.memoryWrite = { [logger] key, value, run in
                memory.commit(MemoryWrite(scope: run.map { .workflowRun($0) } ?? .agent, key: key, operation: .put(value))) { result in
                    if case .failure(let error) = result { logger.error("workflow run \(run ?? "?"): memory key \(key) not written: \(error)") }
                }
            }
        }
        workflows = engine
        engine.apply(definitions)
        if !previous.isEmpty { logger.info("workflows: \(previous.count) unfinished run(s) from the agent's previous run") }
        // Known at once (a schedule's overlap rule sees them going); advanced after the
        // coordinator has recovered its runs, which the steps find again.
        engine.load(previous)
        loop.schedule(after: 0) { engine.resume() }
        if let shared { engine.joinFleet(shared) }
    }

    /// The workflow commands, on the loop.
    func workflowCommand(_ request: JSONValue, caller: CommandCenter.Caller, respond: @escaping (JSONValue) -> Void) {
        if let command = request["command"]?.stringValue, SettingsCommands.workflowDefinitionCommands.contains(command) {
            guard let settingsCommands else {
                return respond(["ok": false, "code": "unavailable", "error": "this agent was not started from a settings file: its workflow definitions cannot be read or changed here"])
            }
            if command != "workflow_get", stopping { return respond(CommandCenter.stoppingAnswer) }
            return settingsCommands.answerWorkflow(request, supervisor: self, respond: respond)
        }
        guard let workflows else {
            return respond(["ok": false, "code": "unavailable", "error": "this agent runs no workflows"])
        }
        let command = request["command"]?.stringValue ?? ""
        guard !stopping || ["workflow_list", "workflow_runs", "workflow_show"].contains(command) else {
            return respond(CommandCenter.stoppingAnswer)
        }
        workflows.answer(request, caller: caller, inbox: loop.inbox, respond: respond)
    }
}
