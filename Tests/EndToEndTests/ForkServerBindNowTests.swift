import AgentTestSupport
import Foundation
import Testing

/// A shell's own `LD_BIND_NOW` binds every process's symbols: nothing left to tell apart.
private let loaderIsLazy = ProcessInfo.processInfo.environment["LD_BIND_NOW"] == nil

/// `AGENT_FORK_SERVER_BIND_NOW=1`: the fork server's loader binds every library's symbols at
/// its start, so that a forked worker finds them bound; the workers, and what they start, do
/// not see the `LD_BIND_NOW` the server was given.
@Suite(.ownThreads, .serialized, .enabled(if: loaderIsLazy, "LD_BIND_NOW is set in the tests' environment"))
struct ForkServerBindNowTests {
    /// The faults module's `children` mode starts `/bin/sleep` with the worker's own environment.
    private static let settings =
        #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"kids": {"type": "fault", "mode": "children", "tick_ms": 1000}}}"#
    private static let oneWorker = #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"one": {"type": "fault", "tick_ms": 1000}}}"#
    private static let library = "libswiftCore.so"

    @Test func workersInheritBoundSymbolsAndNotTheLoadersVariable() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--json"],
                                 environment: ["AGENT_FORK_SERVER_BIND_NOW": "1"])
        let line = try #require(agent.waitForLine { $0.contains(#""type":"children""#) }, "\(agent.transcript)")
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let children = try #require(event["payload"] as? [String: Any]).compactMapValues { ($0 as? Int).map(Int32.init) }
        // The log (stderr, read apart from the events) names the worker's pid.
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[kids] ready in") } != nil, "\(agent.transcript)")
        let worker = try #require(agent.workerPids("kids").first, "\(agent.transcript)")
        let unbound = try #require(Self.unboundSlots(of: worker, in: Self.library), "cannot read \(Self.library)'s table in the worker")
        #expect(unbound == 0, "\(unbound) of \(Self.library)'s symbols were left for the worker to bind")
        let spawned = try #require(children["spawn"])
        let environment = Self.environment(of: spawned)
        #expect(environment.contains("AGENT_FORK_SERVER_BIND_NOW=1"), "the child's environment was not read: \(environment)")
        #expect(!environment.contains { $0.hasPrefix("LD_BIND_NOW=") || $0.hasPrefix("AGENT_WORKER_BIND_NOW_ADDED=") },
                "a module's child inherited the server's loader variable")
        for pid in children.values { kill(pid, SIGKILL) }
        #expect(agent.stop() == 0)
    }

    /// The same check fails without the switch: the server leaves most symbols to be bound.
    @Test func withoutTheSwitchWorkersBindTheSymbolsTheyCall() throws {
        let agent = try AgentRun(settings: Self.oneWorker, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(agent.transcript)")
        let worker = try #require(agent.workerPids("one").first, "\(agent.transcript)")
        let unbound = try #require(Self.unboundSlots(of: worker, in: Self.library), "cannot read \(Self.library)'s table in the worker")
        #expect(unbound > 0, "every one of \(Self.library)'s symbols was bound in a worker of a lazily loaded server")
        #expect(agent.stop() == 0)
    }

    /// /proc/PID/environ as lines.
    private static func environment(of pid: Int32) -> [String] {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// How many of `library`'s lazily bound slots (`.got.plt` after its three reserved
    /// entries) still point into its `.plt`, in process `pid`'s memory: nil when unreadable.
    private static func unboundSlots(of pid: Int32, in library: String) -> Int? {
        // Read to the end: Foundation's String(contentsOfFile:) stops at the first page of a /proc file.
        guard let data = try? FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readToEnd(), case let maps = String(decoding: data, as: UTF8.self),
              let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/" + library) && $0.split(separator: " ").dropFirst(2).first == "00000000" }),
              let base = line.split(separator: "-").first.flatMap({ UInt64($0, radix: 16) }),
              let path = line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init),
              let sections = ELFSections(path: path),
              let plt = sections[".plt"], let table = sections[".got.plt"], table.size > 24 else { return nil }
        // pread: Foundation's FileHandle reads no further than the size /proc reports (0).
        let memory = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard memory >= 0 else { return nil }
        defer { close(memory) }
        var bytes = [UInt8](repeating: 0, count: Int(table.size))
        guard pread(memory, &bytes, bytes.count, off_t(Int64(bitPattern: base + table.address))) == bytes.count else { return nil }
        let slots = stride(from: 24, to: bytes.count, by: 8).map { offset in
            bytes[offset ..< offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        let stubs = (base + plt.address)..<(base + plt.address + plt.size)
        return slots.filter { stubs.contains($0) }.count
    }
}
