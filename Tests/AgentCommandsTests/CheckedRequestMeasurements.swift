import AgentBase
@testable import AgentCommands
import AgentLoop
import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Testing

/// What checking a typical `task_run` request costs, against what it cost when the command
/// decoded it again after the check (the check's decode + a second one): printed, not judged
/// (no timed test). Run with `AGENT_CHECK_BENCH=200000 swift test --filter CheckedRequestMeasurements`.
@Suite(.ownThreads, .enabled(if: ProcessInfo.processInfo.environment["AGENT_CHECK_BENCH"] != nil, "set AGENT_CHECK_BENCH=N to measure"))
struct CheckedRequestMeasurements {
    static let count = Int(ProcessInfo.processInfo.environment["AGENT_CHECK_BENCH"] ?? "") ?? 200_000

    @Test func checkingATaskRunRequestOnceAgainstCheckingAndDecodingAgain() throws {
        let request: JSONValue = ["command": "task_run", "name": "report", "input": ["day": 3, "region": "eu"], "priority": "high"]
        var once: [Double] = []
        var twice: [Double] = []
        // Interleaved rounds, so that the machine's load falls on both alike.
        for _ in 0..<10 {
            var began = EventLoop.now()
            for _ in 0..<Self.count / 10 {
                let checked = try CommandRegistry.standard.check(request).get()
                guard checked.decoded is TaskRunCommand.Request else { throw Failure(description: "not decoded") }
            }
            once.append((EventLoop.now() - began) / Double(Self.count / 10))
            began = EventLoop.now()
            for _ in 0..<Self.count / 10 {
                let checked = try CommandRegistry.standard.check(request).get()
                _ = try JSONValueDecoder().decode(TaskRunCommand.Request.self, from: checked.json)
            }
            twice.append((EventLoop.now() - began) / Double(Self.count / 10))
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(String(format: "task_run check: decoded once %.2f µs, decoded again after the check (before) %.2f µs per request (median of 10 rounds of %d)",
                     median(once) * 1e6, median(twice) * 1e6, Self.count / 10))
    }

    struct Failure: Error, CustomStringConvertible { var description: String }
}
