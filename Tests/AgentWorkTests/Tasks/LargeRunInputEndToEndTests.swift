import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Runs of large inputs, asked for with the real `agent-control task …` of a real agent: the
/// command gets its whole input, an answer leaves it out and names it, `task show` and a rerun
/// have it whole — also once the run is no longer among those memory keeps.
@Suite(.ownThreads) struct LargeRunInputEndToEndTests {
    @Test func aLargeInputReachesItsCommandAndIsShownWholeAfterMemoryLetItGo() throws {
        let (agent, _) = try TaskAgent.agent(tasks: #"""
            "echo": {"type": "command", "command": ["/bin/cat"], "max_concurrent": 4}
            """#)
        defer { _ = agent.stop() }
        let folder = TestPaths.temporaryDirectory("large-input")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // ~80 KiB of JSON each: held as text, its request read off the loop; 10 of them, so that the first is let go.
        func input(_ tag: Int) -> JSONValue {
            ["tag": .number(JSONNumber(tag)), "items": .array((0..<40_000).map { .number(JSONNumber(($0 + tag) % 10)) })]
        }
        var ids: [String] = []
        for tag in 0..<10 {
            let file = folder + "/input-\(tag).json"
            try Data(input(tag).serializedBytes()).write(to: URL(fileURLWithPath: file))
            let result = try TaskAgent.control(agent, ["run", "echo", "--input", "@" + file, "--wait", "--json"])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let run = try JSONValue.parse(result.stdout)
            #expect(run["output"] == input(tag) ? true : false, "the command had the whole input on its stdin")
            #expect(run["input"] == nil && run["omitted"] == ["input"], "the answer leaves the input out: \(result.stdout.prefix(300))")
            ids.append(try #require(run["id"]?.stringValue))
        }

        // The first run, let go from memory: the store has it whole.
        let shown = try TaskAgent.control(agent, ["show", ids[0], "--json"])
        #expect(shown.status == 0, "\(shown.stdout)\(shown.stderr)")
        let first = try JSONValue.parse(shown.stdout)
        let whole = first["input"] == input(0) && first["output"] == input(0)
        #expect(whole && first["status"] == "succeeded", "\(shown.stdout.prefix(300))")

        // A rerun of it takes its input whole.
        let rerun = try TaskAgent.control(agent, ["rerun", ids[0], "--wait", "--json"])
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let again = try JSONValue.parse(rerun.stdout)
        let same = again["output"] == input(0)
        #expect(same && again["rerun_of"]?.stringValue == ids[0], "\(rerun.stdout.prefix(300))")
        #expect(again["omitted"] == ["input"], "read back from the store, the input is held as text again")

        // A list leaves the long members out, naming them.
        let listed = try TaskAgent.control(agent, ["runs", "--task", "echo", "--json"])
        let runs = try listed.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(runs.count == 11 && runs.allSatisfy { $0["omitted"]?.arrayValue?.contains("input") == true }, "\(listed.stdout.prefix(400))")
    }
}
