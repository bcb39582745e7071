import AgentBase
import AgentCore
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Look at the fleet the running agent belongs to (agents sharing runs and schedules on PostgreSQL).",
        discussion: """
        An agent joins a fleet with "fleet" in settings.json: {"postgres": "postgres://USER@HOST/DATABASE", \
        "password": "${env:PGPASSWORD}", "agent_id": "host-a"}. Its task runs are queued in the shared \
        database and carried out by whichever agent has room; one agent at a time fires the schedules. \
        Event types in "publish" go to the fleet; a monitor of any agent receives them by subscribing \
        to "fleet:TYPE".
        """,
        subcommands: [FleetStatus.self])
}

struct FleetStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "The fleet's agents: host, version, processes, executors, runs going, load, last heartbeat; lost when the heartbeat lapsed; and the events this agent publishes and receives.")

    @Flag(name: .long, help: "Print the answer as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(FleetStatusCommand.request(NoFields()), location: location)
        if json { return print(answer.serialized()) }
        print("fleet database \(answer["database"]?.stringValue ?? "?"); this agent: \(answer["agent_id"]?.stringValue ?? "?")")
        if let degraded = answer["degraded"]?.stringValue {
            print("DEGRADED: \(degraded); \(answer["backlog"]?.numberValue?.intValue ?? 0) change(s) waiting, \(answer["dropped"]?.numberValue?.intValue ?? 0) dropped")
        }
        let agents = answer["agents"]?.arrayValue ?? []
        if agents.isEmpty {
            print(answer["degraded"] == nil ? "no agent has sent a heartbeat yet" : "the fleet's agents cannot be read now (see DEGRADED above)")
        }
        for agent in agents { print(Self.line(agent)) }
        if let events = answer["events"], events != .null {
            let count = { (key: String) in events[key]?.numberValue?.intValue ?? 0 }
            let published = (events["published_types"]?.arrayValue ?? []).compactMap(\.stringValue)
            let subscribed = (events["subscribed_types"]?.arrayValue ?? []).compactMap(\.stringValue)
            print("events: publishes \(published.isEmpty ? "nothing" : published.joined(separator: ", ")) (\(count("published")) written, \(count("backlog")) waiting, \(count("dropped")) dropped); receives \(subscribed.isEmpty ? "nothing" : subscribed.joined(separator: ", ")) (\(count("received")) received\(count("skipped") > 0 ? ", \(count("skipped")) skipped as too large" : ""))")
            if let failing = events["failing"]?.stringValue { print("events FAILING: \(failing)") }
        }
    }

    /// NAME RUNNING/MAX for each declared executor, or `implicit`.
    static func executors(_ agent: JSONValue) -> String {
        let list = (agent["executors"]?.arrayValue ?? []).map { executor in
            "\(executor["name"]?.stringValue ?? "?") \(executor["running"]?.numberValue?.intValue ?? 0)/\(executor["max_concurrent"]?.numberValue?.intValue ?? 0)\(executor["draining"] == true ? " draining" : "")"
        }
        return list.isEmpty ? "implicit" : list.joined(separator: ", ")
    }

    /// TASK RUNNING/MAX for each task the agent carries out (what the fleet's strategies choose by), or `none`.
    static func tasks(_ agent: JSONValue) -> String {
        let list = (agent["tasks"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { name, room in
            "\(name) \(room["running"]?.numberValue?.intValue ?? 0)/\(room["max_concurrent"]?.numberValue?.intValue ?? 0)"
        }
        return list.isEmpty ? "none" : list.joined(separator: ", ")
    }

    /// AGENT  STATE  HOST  VERSION  N processes (running/all)  executors  tasks  N runs  load L  heartbeat Ts ago.
    static func line(_ agent: JSONValue) -> String {
        let processes = agent["processes"]?.objectValue ?? [:]
        let running = processes.values.filter { $0.stringValue == "running" }.count
        let silence = agent["seconds_since_heartbeat"]?.numberValue?.doubleValue ?? 0
        // What other agents wrote is shown, not obeyed by the terminal.
        let shown = { (key: String) in TerminalText.shown(agent[key]?.stringValue ?? "?", keepingLines: false) }
        return [shown("agent_id"), agent["state"]?.stringValue ?? "?", shown("host"), shown("version"), "processes \(running)/\(processes.count) running",
                "executors \(Self.executors(agent))", "tasks \(Self.tasks(agent))", "runs \(agent["running_runs"]?.numberValue?.intValue ?? 0)", "load \(agent["load"]?.numberValue?.doubleValue ?? 0)",
                "heartbeat \(String(format: "%.1f", silence)) s ago"].joined(separator: "  ")
    }
}
