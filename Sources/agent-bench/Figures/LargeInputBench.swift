import AgentBase
import AgentRuntime
import Foundation
import JSONSchema

/// Part of figure 10: what queued runs with large inputs cost the supervisor. Runs of a task
/// that never starts them (`max_concurrent` 1, its one run sleeping) are asked for over the
/// control socket, each with an input of 1 MiB of small numbers (the input a run may have at
/// most, and the costliest kind as parsed values); the supervisor's RSS before and after, per
/// run, against the floor of the input's own text; and the loop's longest turn meanwhile.
enum LargeInputBench {
    static func measure(_ environment: BenchEnvironment, into section: inout Section) {
        let runs = environment.quick ? 40 : 100
        let items = JSONValue.array((0..<500_000).map { .number(JSONNumber($0 % 10)) })
        func request(_ index: Int) -> JSONValue {
            ["command": "task_run", "name": "hold", "input": ["index": .number(JSONNumber(index)), "items": items]]
        }
        let text = request(0)["input"]?.serializedBytes() ?? []
        section.note("Large inputs: an agent (agent-control console, the store on) with a task `hold` (`/bin/sleep 1000`, max_concurrent 1); \(runs) task_run requests over the control socket, one after another, each with an input of \(text.count) bytes of JSON (500,000 one-digit numbers); the supervisor's RSS (/proc/PID/smaps_rollup) after the first run started and after the last was answered, the growth per queued run against the input's own text; the loop's longest turn from `status` (`loop.longest_turn`, over the agent's life).")
        do {
            let settings = #"{"enabled_modules": [], "processes": {}, "tasks": {"hold": {"type": "command", "command": ["/bin/sleep", "1000"], "max_concurrent": 1}}}"#
            let (run, directory) = try AgentTaskBench.startAgent(environment, name: "large-inputs", settings: settings, refusalMentioning: "/tasks/")
            defer { AgentTaskBench.stopAgent(run) }
            let paths = AgentPaths(agentDirectory: directory)
            _ = try ControlClient.send(request(0), paths: paths, timeout: 60)
            guard let before = ProcFiles.memory(of: run.pid) else { throw BenchError("no /proc/\(run.pid)/smaps_rollup") }
            for index in 1..<runs {
                let answer = try ControlClient.send(request(index), paths: paths, timeout: 60)
                guard answer["ok"]?.boolValue == true else { throw BenchError("task_run answered \(answer.serialized().prefix(300))") }
                run.pump(maxWait: 0)
            }
            guard let after = ProcFiles.memory(of: run.pid) else { throw BenchError("no /proc/\(run.pid)/smaps_rollup") }
            let status = try ControlClient.send(["command": "status"], paths: paths, timeout: 60)
            let perRun = (after.rssMB - before.rssMB) / Double(runs - 1)
            section.add(Figure("queued run with a 1 MiB input: supervisor RSS per run", .megabytes, median: perRun, count: runs - 1,
                               note: String(format: "RSS %.0f → %.0f MB; 100 runs took 1,340 MB before stop 90 (the input held as values, ~13 MB each)", before.rssMB, after.rssMB)))
            section.add(Figure("  floor: the input's own text", .megabytes, median: Double(text.count) / Double(1 << 20), count: 1))
            if let longest = status["loop"]?["longest_turn"]?.numberValue?.doubleValue {
                section.add(Figure("  the loop's longest turn meanwhile", .milliseconds, median: longest * 1000, count: 1,
                                   note: "a request of 1 MiB is read and checked off the loop"))
            }
            section.compare("queued run with a 1 MiB input: supervisor RSS per run", with: "  floor: the input's own text")
        } catch {
            section.fail("large inputs: \(error)")
        }
    }
}
