import AgentBase
import AgentCommands
import AgentStore
import AgentWork
import Foundation
import JSONSchema

/// Wiring of the schedules: the ``Scheduler`` does the work; the supervisor creates it after
/// the tasks, forwards commands, reloads and the stop, and publishes its events.
extension Supervisor {
    /// Creates the scheduler with the settings' schedules and their saved states (read from the
    /// store now, before the loop runs). Call once, after ``setUpTasks(_:agentDirectory:notifications:)``
    /// and ``setUpWorkflows(_:roles:)``: a schedule may start workflows.
    public func setUpSchedules(_ definitions: [ScheduleDefinition]) {
        guard let tasks else { return }
        var scheduleStore: (any ScheduleStore)?
        var saved: [String: ScheduleState] = [:]
        if let fleet {
            let scheduler = Scheduler(loop: loop, store: fleet.scheduleStore, tasks: tasks, logger: logger)
            scheduler.publish = { [unowned self] type, payload in publishWorkEvent(type, payload, source: "schedules") }
            scheduler.inFleet = true
            scheduler.fleetDefinitions = definitions
            self.scheduler = scheduler
            // Fires wait for the leadership (``seekScheduleLeadership()``).
            return
        }
        if let store {
            do {
                let sqlite = try SQLiteScheduleStore(store: store)
                saved = try StoreWait.result { try await sqlite.loadStates() }
                scheduleStore = sqlite
            } catch {
                logger.error("schedules: cannot read their state from the store (\(error)); schedules are kept in memory only")
            }
        }
        let scheduler = Scheduler(loop: loop, store: scheduleStore, tasks: tasks, logger: logger)
        scheduler.workflows = workflows
        scheduler.publish = { [unowned self] type, payload in publishWorkEvent(type, payload, source: "schedules") }
        self.scheduler = scheduler
        scheduler.start(definitions, saved: saved)
    }

    /// The schedule commands, on the loop.
    func scheduleCommand(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let scheduler else {
            return respond(["ok": false, "code": "unavailable", "error": "this agent runs no schedules"])
        }
        let command = request["command"]?.stringValue ?? ""
        guard !stopping || ["schedule_list", "schedule_next", "schedule_history"].contains(command) else {
            return respond(CommandCenter.stoppingAnswer)
        }
        scheduler.answer(request, runStore: tasks?.store, inbox: loop.inbox, respond: respond)
    }
}
