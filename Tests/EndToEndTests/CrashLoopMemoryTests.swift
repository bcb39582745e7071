import AgentTestSupport
import Foundation
import Testing

/// The supervisor's own memory across a crash loop: what a restart allocates is given back.
@Suite(.ownThreads) struct CrashLoopMemoryTests {
    /// A process that exits as soon as it is ready, restarted at once, a thousand times: the
    /// supervisor's anonymous memory (its heap and arenas, not the code it maps) grows by far
    /// less than a kilobyte a restart once warm. Foundation's `String(contentsOfFile:)` on a
    /// /proc file, read on every restart before stop 59, grew it 4 MB over these 1,000
    /// restarts (3.96 MB measured with it put back; 0.28 MB without, most of it before the
    /// 800th). Read from agent-control's /proc status, never the test process's.
    @Test func aThousandRestartsLeaveTheSupervisorsMemoryWhereItWas() throws {
        let run = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "loop": {"type": "fault", "mode": "exit", "after_ms": 0, "restart": {"initial_delay": 0, "max_restarts": null}}}}
        """, arguments: ["--no-build", "--quiet"])
        let agent = run.process.processIdentifier
        func anonymousKilobytes() throws -> Int {
            let field = ProcFacts.status(agent, "RssAnon")
            return try #require(Int(field.split(separator: " ").first ?? ""), "RssAnon of agent-control: \"\(field)\"")
        }
        func restarts(_ count: Int) -> Bool {
            // A slow machine restarts some 50 times a second; this one about 200.
            run.waitForLines(onStderr: true, count: count, timeout: 240) { $0.contains("[loop] ready in") }.count >= count
        }
        // Warm: the allocator's arenas and the runtime's caches grow over the first restarts.
        #expect(restarts(500), "\(run.transcript.suffix(2_000))")
        let warm = try anonymousKilobytes()
        #expect(restarts(1_500), "\(run.transcript.suffix(2_000))")
        let after = try anonymousKilobytes()
        #expect(after - warm < 2_048, "the supervisor's anonymous memory grew from \(warm) kB to \(after) kB over 1,000 restarts")
        #expect(run.stop() == 0)
    }
}
