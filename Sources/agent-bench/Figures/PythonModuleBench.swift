import AgentCore
import AgentRuntime
import CAgentSystem
import Foundation

/// Figure 15: modules in Python (jsonl/1, with SDK/Python/agentruntime.py): events from a
/// Python datasource through the supervisor to a monitor against the same program's lines into
/// a bare pipe reader, in the same run; a Python worker's start → ready and memory beside a
/// Swift worker's.
enum PythonModuleBench {
    /// The datasource: `count` `bench` events as fast as the SDK writes them, then `bench_end`.
    static let source = """
        from agentruntime import emit, main


        @emit("bench")
        def numbered(ctx):
            pad = "x" * ctx.settings["pad"]
            for seq in range(ctx.settings["count"]):
                yield {"seq": seq, "pad": pad}
            ctx.emit("bench_end", {"count": ctx.settings["count"]})
            while ctx.sleep(3600):
                pass


        main()

        """
    /// A process that only waits (the SDK's heartbeats), as bench_idle does in Swift.
    static let idle = """
        from agentruntime import main, subscribe


        @subscribe
        def nothing(event, ctx):
            pass


        main()

        """
    static let manifest = #"""
        {"name": "pybench", "version": "1.0.0", "protocol": "jsonl/1",
         "process_types": {
           "py_bench_source": {"kind": "datasource", "command": ["python3", "source.py"],
             "settings": {"type": "object", "properties": {"count": {"type": "integer"}, "pad": {"type": "integer"}}, "required": ["count", "pad"], "additionalProperties": false}},
           "py_bench_idle": {"kind": "monitor", "command": ["python3", "idle.py"]}}}
        """#
    /// `{"seq":N,"pad":"…"}` is 100 bytes with N of 6 digits.
    static let pad = 80

    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        var section = Section(
            number: 15, title: "Modules in Python (jsonl/1)",
            method: "A Python datasource (SDK/Python/agentruntime.py, a generator yielding {\"seq\": N, \"pad\": \"x…\"}, about 100 B of payload) emits `bench` events as fast as it can, then `bench_end`. Through the supervisor: in an embedded agent (as figure 4, store off), its worker reads the program's lines and the supervisor routes the events to bench_sink (Swift, queue \"when_full\": \"block\"); throughput = events / (last receipt − first emit stamp). Bare pipe, same run: the bench starts the same program with the same start frame and reads its stdout itself, counting lines; throughput = events / (last line read − first line read). Start → ready: agent-control console with 5 Python monitors that only wait and 5 Swift bench_idle workers, the supervisor's \"ready in\" (spawn → ready frame); memory: PSS of each process's worker and, for Python, its program (the worker's child) once all are ready.")
        do {
            let repetitions = environment.quick ? 2 : 5
            let count = environment.quick ? 200_000 : 1_000_000
            var routed = Samples()
            var floor = Samples()
            for _ in 1...repetitions {
                routed.append(try throughSupervisor(environment, count: count, logFD: logFD, section: &section))
                floor.append(try barePipe(environment, count: count))
            }
            section.add(Figure("Python datasource → supervisor → monitor", .eventsPerSecond, samples: routed,
                               note: "\(TableRenderer.grouped(count)) events of about 100 B per run"))
            section.add(Figure("the same program → a bare pipe reader", .eventsPerSecond, samples: floor, note: "the floor"))
            section.add(Figure("  ratio supervisor / bare pipe", .ratio, median: routed.median / floor.median, count: routed.count,
                               note: "of the medians; target ≥ 0.8"))
        } catch {
            section.fail("throughput: \(error)")
        }
        do {
            try startAndMemory(environment, into: &section)
        } catch {
            section.fail("start and memory: \(error)")
        }
        return section
    }

    /// Writes the module into `<agent>/modules/pybench` with the SDK beside its programs.
    static func writeModule(into agent: String) throws {
        guard let root = environmentRoot(), FileManager.default.fileExists(atPath: root + "/SDK/Python/agentruntime.py") else {
            throw BenchError("cannot find SDK/Python/agentruntime.py above the binaries (run agent-bench from its build tree)")
        }
        let folder = agent + "/modules/pybench"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try manifest.write(toFile: folder + "/module.json", atomically: true, encoding: .utf8)
        try source.write(toFile: folder + "/source.py", atomically: true, encoding: .utf8)
        try idle.write(toFile: folder + "/idle.py", atomically: true, encoding: .utf8)
        if !FileManager.default.fileExists(atPath: folder + "/agentruntime.py") {
            try FileManager.default.copyItem(atPath: root + "/SDK/Python/agentruntime.py", toPath: folder + "/agentruntime.py")
        }
    }

    /// The checkout above the binaries (`<checkout>/.build/<triple>/<configuration>`).
    static func environmentRoot() -> String? {
        var folder = URL(fileURLWithPath: AgentLauncher.runtimeDirectory)
        for _ in 0..<5 {
            folder.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: folder.path + "/SDK/Python") { return folder.path }
        }
        return nil
    }

    nonisolated(unsafe) static var runNumber = 0

    /// One run through an embedded agent; events per second.
    static func throughSupervisor(_ environment: BenchEnvironment, count: Int, logFD: Int32, section: inout Section) throws -> Double {
        runNumber += 1
        let name = "python-routing-\(runNumber)"
        try writeModule(into: environment.folder(name))
        let settings = """
            {"enabled_modules": ["pybench", "bench"], "store": {"enabled": false},
             "processes": {
               "source": {"type": "py_bench_source", "count": \(count), "pad": \(pad)},
               "sink": {"type": "bench_sink", "queue": {"when_full": "block"}}}}
            """
        let agent = try EmbeddedAgent(environment: environment, name: name, settings: settings, logFD: logFD)
        agent.supervisor.startAll()
        var result: RoutingResult?
        agent.run(timeout: 120) {
            for message in agent.readMessages() where message.source == "sink" { result = RoutingResult(json: message.text) }
            return result != nil || agent.supervisor.snapshot.contains { $0.restarts > 0 || !$0.state.isLive }
        }
        _ = agent.stopAll()
        guard let result else { throw BenchError("the sink reported nothing within 120 s") }
        // The sink reads sequence numbers at a fixed offset (Swift's bench payload); Python's
        // JSON has none there, so only the count is checked.
        if result.count != count { section.fail("through the supervisor: \(result.count) of \(count) events arrived") }
        return Double(result.count) / (Double(max(1, result.lastReceived - result.firstEmitted)) / 1e9)
    }

    /// The same program started by the bench, its stdout read by a loop that only counts lines.
    static func barePipe(_ environment: BenchEnvironment, count: Int) throws -> Double {
        runNumber += 1
        let agent = environment.folder("python-pipe-\(runNumber)")
        try writeModule(into: agent)
        let folder = agent + "/modules/pybench"
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        child.arguments = ["python3", "source.py"]
        child.currentDirectoryURL = URL(fileURLWithPath: folder)
        let input = Pipe(), output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer {
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            child.waitUntilExit()
        }
        let start = #"{"start": {"settings": {"count": \#(count), "pad": \#(pad)}, "process": "source", "type": "py_bench_source"}}"# + "\n"
        input.fileHandleForWriting.write(Data(start.utf8))
        let fd = output.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var lines = 0
        var first = 0.0
        // ready, `count` events, bench_end.
        while lines < count + 2 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw BenchError("the program ended after \(lines) lines") }
            if lines <= 1, first == 0 { first = Clock.now() }
            lines += buffer[0..<n].reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        }
        let seconds = Clock.now() - first
        input.fileHandleForWriting.write(Data(#"{"stop": true}"#.utf8 + [10]))
        return Double(count) / seconds
    }

    /// Five Python and five Swift workers under agent-control: start → ready and memory.
    static func startAndMemory(_ environment: BenchEnvironment, into section: inout Section) throws {
        let workers = 5
        let agent = environment.folder("python-start")
        try writeModule(into: agent)
        let python = (0..<workers).map { #""py\#($0)": {"type": "py_bench_idle"}"# }
        let swift = (0..<workers).map { #""sw\#($0)": {"type": "bench_idle"}"# }
        let file = try environment.writeAgent("python-start", settings: #"{"enabled_modules": ["pybench", "bench"], "store": {"enabled": false}, "processes": {"#
                                                + (python + swift).joined(separator: ", ") + "}}")
        var ready = (python: Samples(), swift: Samples())
        var memory = (python: Samples(), pythonProgram: Samples(), swift: Samples())
        for _ in 0..<(environment.quick ? 2 : 5) {
            let run = try ConsoleRun(environment: environment, settingsFile: file)
            guard run.wait(timeout: 60, until: { run.readyTimes.count >= 2 * workers }) else {
                throw BenchError("\(run.readyTimes.count) of \(2 * workers) workers ready after 60 s; \(run.errors.prefix(3).joined(separator: " | "))")
            }
            for line in run.lines {
                guard let open = line.text.firstIndex(of: "["), let close = line.text.firstIndex(of: "]"), open < close,
                      let range = line.text.range(of: "ready in "),
                      let milliseconds = Double(line.text[range.upperBound...].prefix { $0.isNumber || $0 == "." }) else { continue }
                let name = line.text[line.text.index(after: open)..<close]
                if name.hasPrefix("py") { ready.python.append(milliseconds) } else if name.hasPrefix("sw") { ready.swift.append(milliseconds) }
            }
            for pid in run.workerPids {
                guard let own = ProcFiles.memory(of: pid) else { continue }
                let children = (ProcFiles.read("/proc/\(pid)/task/\(pid)/children") ?? "").split(separator: " ").compactMap { Int32($0) }
                let programs = children.compactMap { ProcFiles.memory(of: $0) }
                if programs.isEmpty {
                    memory.swift.append(own.pssMB)
                } else {
                    memory.python.append(own.pssMB)
                    memory.pythonProgram.append(programs.reduce(0) { $0 + $1.pssMB })
                }
            }
            let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
            guard stopped != nil, left.isEmpty else { throw BenchError("SIGTERM: \(left.count) worker(s) left after 20 s") }
        }
        section.add(Figure("start → ready, Python worker", .milliseconds, samples: ready.python,
                           note: "the worker's spawn → the program's {\"ready\": true} (python3 and the SDK imported)"))
        section.add(Figure("start → ready, Swift worker", .milliseconds, samples: ready.swift, note: "bench_idle, the same agent"))
        section.add(Figure("memory (PSS), Python: its worker", .megabytes, samples: memory.python))
        section.add(Figure("memory (PSS), Python: its program", .megabytes, samples: memory.pythonProgram, note: "python3 with the SDK"))
        section.add(Figure("memory (PSS), Swift worker", .megabytes, samples: memory.swift))
    }
}
