import AgentTestSupport
import Foundation
import Testing

/// Workers stay small: the server-side libraries (Hummingbird, NIO, metrics, PostgresNIO) are linked by
/// agent-control only.
@Suite(.ownThreads) struct WorkerFootprintTests {
    @Test func workerLinksNoServerSideLibrary() throws {
        let worker = try Data(contentsOf: URL(fileURLWithPath: TestPaths.products + "/agent-worker"))
        let control = try Data(contentsOf: URL(fileURLWithPath: TestPaths.products + "/agent-control"))
        for library in ["Hummingbird", "NIOPosix", "Prometheus", "PostgresNIO"] {
            // Swift symbols carry their module's name; agent-control has them, so the search works.
            #expect(control.range(of: Data(library.utf8)) != nil, "agent-control should contain \(library)")
            #expect(worker.range(of: Data(library.utf8)) == nil, "agent-worker contains \(library)")
        }
    }
}

/// A running worker's own memory is mostly per thread (each thread's touched stack, and in
/// glibc a malloc arena per thread): it runs three threads of its own beside the main one and
/// dispatch's, and at most one malloc arena besides the main one, forked by the fork server or spawned alike.
@Suite(.ownThreads) struct WorkerThreadsAndArenasTests {
    private static let settings = #"{"enabled_modules": ["faults"], "processes": {"one": {"type": "fault", "tick_ms": 200}}}"#

    /// glibc's malloc arenas other than the main one in `pid`'s /proc/PID/maps: each is a
    /// 64 MiB reservation aligned on 64 MiB (HEAP_MAX_SIZE), its used part read-write and the
    /// rest without access, side by side.
    private static func mallocArenas(of pid: Int32) -> Int {
        let span: UInt64 = 64 << 20
        let maps = (try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? ""
        let ranges = maps.split(separator: "\n").compactMap { line -> (start: UInt64, end: UInt64, perms: Substring)? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields.first?.split(separator: "-") ?? []
            guard fields.count >= 5, bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { return nil }
            return (start, end, fields[1])
        }
        return zip(ranges, ranges.dropFirst()).filter { used, rest in
            used.start % span == 0 && used.perms == "rw-p" && rest.perms == "---p" && used.end == rest.start && rest.end - used.start == span
        }.count
    }

    /// Each of the worker's own threads is there once, and the main thread alone keeps the
    /// program's name. A thread starts with its creator's name until it is named (the
    /// cooperative pool's, made by "agent-process", until dispatch names it; one the main
    /// thread makes, until it names itself), so a snapshot can briefly show a name twice: the
    /// wait is for a snapshot without, and the test fails if the second one stays.
    private static func ownThreadsOnceEach(_ pid: Int32) -> Bool {
        let names = ProcFacts.threadNames(pid)
        return ["agent-process", "agent-reader", "agent-writer", "agent-worker"].allSatisfy { name in names.filter { $0 == name }.count == 1 }
    }

    @Test(arguments: [false, true])
    func aWorkerRunsThreeThreadsOfItsOwnAndAtMostTwoMallocArenas(forked: Bool) throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"],
                                 environment: forked ? [:] : ["AGENT_FORK_SERVER": "0"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(agent.transcript)")
        let pid = try #require(agent.workerPids("one").first)
        // The threads name themselves as they start: wait for the three, once each (generously).
        let deadline = Date().addingTimeInterval(30)
        while !Self.ownThreadsOnceEach(pid), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let names = ProcFacts.threadNames(pid)
        for name in ["agent-reader", "agent-writer"] {
            #expect(names.filter { $0 == name }.count == 1, "\(name) in \(names)")
        }
        // A dispatch thread that "agent-process" starts carries its name until it runs a block:
        // on a loaded machine dispatch may start one and leave it idle past the wait (a CI run:
        // [… "agent-process", "-qos.overcommit", "agent-process"]). Neither is a thread of ours.
        #expect(names.contains("agent-process"), "threads: \(names)")
        // The main thread keeps the program's name; no other thread of the worker's own (the
        // SIGTERM watcher was one) is left unnamed. Dispatch's threads carry their queue's name.
        #expect(names.filter { $0 == "agent-worker" }.count == 1, "threads: \(names)")
        #expect(!names.contains("agent-signals"), "threads: \(names)")
        #expect(Self.mallocArenas(of: pid) <= 1, "malloc arenas besides the main one: \(Self.mallocArenas(of: pid)); threads: \(names)")
        // SIGTERM still stops it gracefully (the watcher is a dispatch source now).
        kill(pid, SIGTERM)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] worker pid \(pid) exited with status 0") } != nil, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    /// `AGENT_WORKER_MALLOC_ARENAS=0` leaves glibc's own limit: the worker's threads then get
    /// arenas of their own, which the check above counts (it can see them).
    @Test func glibcsOwnLimitGivesTheThreadsArenasOfTheirOwn() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"],
                                 environment: ["AGENT_WORKER_MALLOC_ARENAS": "0"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(agent.transcript)")
        let pid = try #require(agent.workerPids("one").first)
        let deadline = Date().addingTimeInterval(30)
        while Self.mallocArenas(of: pid) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(Self.mallocArenas(of: pid) >= 1, "threads: \(ProcFacts.threadNames(pid))")
        #expect(agent.stop() == 0)
    }

    /// A value that is not a whole number: said on stderr, naming the variable and what it
    /// expects; the worker runs with the default limit.
    @Test func aBadArenaLimitIsNamedAndTheDefaultHolds() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"],
                                 environment: ["AGENT_WORKER_MALLOC_ARENAS": "two"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(agent.transcript)")
        let said = agent.waitForLine(onStderr: true) { $0.contains("AGENT_WORKER_MALLOC_ARENAS=\"two\" is not a whole number ≥ 0") }
        #expect(said?.contains("using 2") == true, "\(agent.transcript)")
        let pid = try #require(agent.workerPids("one").first)
        #expect(Self.mallocArenas(of: pid) <= 1)
        #expect(agent.stop() == 0)
    }
}
