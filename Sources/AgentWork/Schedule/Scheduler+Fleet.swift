import AgentBase
import AgentLoop
import Foundation
import JSONSchema

/// `schedule list` in a fleet: every agent shows the fleet's schedules (the settings' own,
/// with the state the leader committed to the shared store) and which agent leads them;
/// only the leader fires them and knows its counts.
extension Scheduler {
    /// `schedule_list`: this agent's schedules, or in a fleet the fleet's with their leader
    /// (read off the loop unless this agent leads).
    package func list(respond: @escaping (Result<ScheduleListCommand.Answer, CommandError>) -> Void) {
        guard inFleet else { return respond(.success(ScheduleListCommand.Answer(schedules: scheduleList()))) }
        if let leadership {
            let schedules = scheduleList().map { Self.led($0, by: leadership.holder) }
            return respond(.success(ScheduleListCommand.Answer(schedules: schedules, leader: leadership.holder, leads: true)))
        }
        guard let store else { return respond(.failure(.unavailable("the fleet's schedules cannot be read: no store"))) }
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let read = await Result { () async throws -> ([String: ScheduleState], Leadership?) in
                (try await store.loadStates(), try await store.currentLeader())
            }
            inbox.post {
                let scheduler = self
                switch read {
                case .failure(let error):
                    reply.value(.failure(.unavailable("cannot read the fleet's schedules: \(error)", retryAfter: 5)))
                case .success(let (states, leader)):
                    let schedules = scheduler.fleetList(states).map { Self.led($0, by: leader?.holder) }
                    reply.value(.success(ScheduleListCommand.Answer(schedules: schedules, leader: leader?.holder, leads: false)))
                }
            }
        }
    }

    /// The settings' schedules with the states the leader committed; the next fire computed
    /// here when the state has none still coming.
    private func fleetList(_ states: [String: ScheduleState]) -> [JSONValue] {
        let now = clock()
        return fleetDefinitions.sorted { $0.name < $1.name }.map { definition in
            var state = states[definition.name] ?? ScheduleState(name: definition.name, through: now)
            if state.next.map({ $0 <= now }) ?? true, !definition.timing.isReboot {
                state.next = definition.timing.nextFire(after: max(state.through, now), in: definition.timeZone)
            }
            return describe(definition, state: state, counts: nil)
        }
    }

    /// A schedule with the agent that fires it (`leader`; absent when none leads now).
    private static func led(_ schedule: JSONValue, by leader: String?) -> JSONValue {
        guard let leader, case .object(var object) = schedule else { return schedule }
        object["leader"] = .string(leader)
        return .object(object)
    }

    /// The settings' schedule `name` (the fleet's when this agent does not lead it).
    func scheduleDefinition(named name: String) -> ScheduleDefinition? {
        entries[name]?.definition ?? (inFleet ? fleetDefinitions.first { $0.name == name } : nil)
    }
}
