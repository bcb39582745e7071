import AgentTestSupport
@testable import AgentWork
import Testing

/// The strategies' choice among a fleet's agents (``FleetAssigner``), from the members'
/// heartbeats: each strategy as it is for executors, the lost and the agents without the task
/// left out.
@Suite(.ownThreads) struct FleetAssignerTests {
    static func member(_ id: String, running: Int = 0, max: Int = 4, boost: Int = 0, preferences: [TaskRun.Priority] = [],
                       silence: Double = 0, task: String = "t") -> FleetMember {
        var member = FleetMember(agentID: id, host: id, version: "test", started: 0, heartbeat: 0, processes: [:], running: running,
                                 load: 0, interval: 1)
        member.silence = silence
        member.tasks = [task: FleetMember.TaskRoom(running: running, maxConcurrent: max, priorityBoost: boost, preferences: preferences)]
        return member
    }

    @Test func roundRobinGivesEachAgentInTurnSkippingFullOnes() {
        var assigner = FleetAssigner()
        assigner.update([Self.member("c"), Self.member("a"), Self.member("b")])
        let chosen = (0..<9).compactMap { _ in assigner.choose(task: "t", priority: .normal, strategy: .roundRobin) }
        #expect(chosen == ["a", "b", "c", "a", "b", "c", "a", "b", "c"])
        assigner.update([Self.member("a", running: 1, max: 2), Self.member("b", running: 1, max: 2)])
        let next = (0..<4).compactMap { _ in assigner.choose(task: "t", priority: .normal, strategy: .roundRobin) }
        #expect(next == ["a", "b", "a", "b"], "in turn after c; once both are full, in turn all the same (the runs wait for their room)")
    }

    @Test func loadBalancedCountsWhatItGaveSinceTheHeartbeats() {
        var assigner = FleetAssigner()
        assigner.update([Self.member("a", running: 2, max: 4), Self.member("b", running: 0, max: 2)])
        let chosen = (0..<4).compactMap { _ in assigner.choose(task: "t", priority: .normal, strategy: .loadBalanced) }
        // b 0/2; then b 1/2 ties a 2/4 (fewer given: a); then b 1/2 < a 3/4; then b is full: a.
        #expect(chosen == ["b", "a", "b", "a"])
    }

    @Test func bestFitAndPriorityFirstFollowTheExecutorsBoostsAndPreferences() {
        var assigner = FleetAssigner()
        assigner.update([Self.member("plain"), Self.member("boosted", boost: 3), Self.member("urgent", preferences: [.critical])])
        #expect(assigner.choose(task: "t", priority: .normal, strategy: .bestFit) == "boosted")
        #expect(assigner.choose(task: "t", priority: .critical, strategy: .priorityFirst) == "urgent")
        #expect(assigner.choose(task: "t", priority: .normal, strategy: .priorityFirst) == "boosted")
    }

    /// The chosen agent never claimed a run whose labels none of its executors carries: the run
    /// waited for the hold before an agent that could take it did.
    @Test func aRunRequiringLabelsGoesOnlyToAnAgentWhoseExecutorsCarryThem() throws {
        var gpu = Self.member("a"), plain = Self.member("b"), older = Self.member("c")
        gpu.tasks["t"]?.labels = [["zone": "eu"], ["gpu": "yes", "zone": "us"]]
        plain.tasks["t"]?.labels = []
        older.tasks["t"]?.labels = nil
        var assigner = FleetAssigner()
        assigner.update([gpu, plain])
        let chosen = (0..<4).compactMap { _ in assigner.choose(task: "t", priority: .normal, require: ["gpu": "yes"], strategy: .roundRobin) }
        #expect(chosen == ["a", "a", "a", "a"])
        #expect(assigner.choose(task: "t", priority: .normal, require: ["gpu": "no"], strategy: .roundRobin) == nil)
        assigner.update([gpu, plain])
        #expect(Set((0..<4).compactMap { _ in assigner.choose(task: "t", priority: .normal, strategy: .roundRobin) }) == ["a", "b"])
        // An agent that does not tell its labels may still be chosen.
        assigner.update([plain, older])
        #expect(assigner.choose(task: "t", priority: .normal, require: ["gpu": "yes"], strategy: .roundRobin) == "c")
        // As the heartbeat carries them.
        let room = try #require(gpu.tasks["t"])
        #expect(FleetMember.TaskRoom(room.json) == room)
        #expect(FleetMember.TaskRoom(["max_concurrent": 2])?.labels == nil)
    }

    @Test func lostAgentsAndAgentsWithoutTheTaskAreNeverChosen() {
        var assigner = FleetAssigner()
        assigner.update([Self.member("lost", silence: 10), Self.member("other", task: "u"), Self.member("alive")])
        for _ in 0..<3 { #expect(assigner.choose(task: "t", priority: .normal, strategy: .roundRobin) == "alive") }
        #expect(assigner.choose(task: "v", priority: .normal, strategy: .bestFit) == nil, "no agent carries it out: none is preferred")
    }
}
