import AgentTestSupport
import Foundation
import Testing

/// The supervisor's own memory across a crash loop: what a restart allocates is given back.
@Suite(.ownThreads) struct CrashLoopMemoryTests {
    /// A process that exits as soon as it is ready, restarted at once, a thousand times: the
    /// supervisor's anonymous memory (its heap and arenas, not the code it maps) grows by less
    /// than a kilobyte a restart once warm (0.16–0.28 MB over these 1,000 restarts), and so do
    /// its shared memory (the workers' rings) and its descriptors. Foundation's
    /// `String(contentsOfFile:)` on a /proc file, read on every restart before stop 59, grew the
    /// anonymous memory 4 MB over them (3.96 MB measured with it put back). Within a death's
    /// leftovers, which a sweep frees up to a quarter of a second later (at most 64 of them),
    /// the rings and descriptors stay where they were. Read from agent-control's /proc, never
    /// the test process's.
    @Test func aThousandRestartsLeaveTheSupervisorsMemoryWhereItWas() throws {
        let run = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "loop": {"type": "fault", "mode": "exit", "after_ms": 0, "restart": {"initial_delay": 0, "max_restarts": null}}}}
        """, arguments: ["--no-build", "--quiet"])
        let agent = run.process.processIdentifier
        func held() throws -> (anonymous: Int, shared: Int, descriptors: Int) {
            func kilobytes(_ key: String) throws -> Int {
                let field = ProcFacts.status(agent, key)
                return try #require(Int(field.split(separator: " ").first ?? ""), "\(key) of agent-control: \"\(field)\"")
            }
            let descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent)/fd")) ?? []).count
            return (try kilobytes("RssAnon"), try kilobytes("RssShmem"), descriptors)
        }
        func restarts(_ count: Int) -> Bool {
            // A slow machine restarts some 50 times a second; this one about 200.
            run.waitForLines(onStderr: true, count: count, timeout: 240) { $0.contains("[loop] ready in") }.count >= count
        }
        // Warm: the allocator's arenas and the runtime's caches grow over the first restarts.
        #expect(restarts(500), "\(run.transcript.suffix(2_000))")
        let warm = try held()
        #expect(restarts(1_500), "\(run.transcript.suffix(2_000))")
        let after = try held()
        #expect(after.anonymous - warm.anonymous < 1_024, "the supervisor's anonymous memory grew from \(warm.anonymous) kB to \(after.anonymous) kB over 1,000 restarts")
        #expect(after.shared - warm.shared < 4_096, "the supervisor's shared memory grew from \(warm.shared) kB to \(after.shared) kB over 1,000 restarts")
        #expect(after.descriptors - warm.descriptors < 300, "the supervisor's descriptors went from \(warm.descriptors) to \(after.descriptors) over 1,000 restarts")
        #expect(run.stop() == 0)
    }
}
