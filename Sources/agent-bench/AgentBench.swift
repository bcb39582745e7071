import AgentCore
import AgentStore
import AgentVersion
import ArgumentParser
import Foundation

/// `agent-bench`: measures the runtime's hot paths and prints the figures.
struct AgentBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent-bench",
        abstract: "Measure how fast and how light the runtime is.",
        discussion: """
        Runs the figures of benchmarks/README.md against the binaries built next to agent-bench \
        (agent-control, agent-worker, libsystem.so, libsample.so, libbench.so) and prints a table: \
        for every figure what was measured and how, the median, p99 (from 100 samples) and max, \
        and the number of repetitions. Build everything in release mode first:

          swift build -c release && .build/release/agent-bench

        Figures: 1 module load, 2 settings validation, 3 worker start and restart, 4 event routing \
        against a socketpair baseline, 5 the same with the store on (routing with the store off and \
        on, events persisted per second, the store's insert rate, query latency), 6 idle cost, \
        7 scale (500 workers), 8 cold start and stop, 9 HTTP: GET /api/status under wrk against supervisord's \
        XML-RPC getAllProcessInfo (wrk is installed with apt-get when missing, supervisor from PyPI into the \
        scratch folder; nothing is kept), 10 tasks: a no-op task, request → started and completed runs/s, against \
        the floor of a command (posix_spawn + wait of /bin/true) and Celery and RQ on Debian's redis-server (installed \
        with apt-get when missing; celery and rq from PyPI into the scratch folder), 11 schedules: 100 schedules \
        every second, lateness planned → started and fires missed, against APScheduler (from PyPI into the scratch \
        folder), and the supervisor's idle CPU with 100 schedules waiting vs none, 12 workflows: persisted steps/s through a \
        10-step no-op chain, a restart with 1,000 runs waiting for an event, event → continuation latency, 13 a fleet on one \
        PostgreSQL (Debian's postgresql, installed with apt-get when missing, started by the bench): claimed-and-completed \
        runs/s with 1, 2 and 4 agents, queued → claimed, kill -9 → runs resumed, figure 4's routing without and with \
        "fleet", against procrastinate (from PyPI into the scratch folder) on the same server, 14 pathological patterns: the \
        longest one validation takes, against NSRegularExpression on tiny inputs, 15 modules in Python (jsonl/1): events/s \
        from a Python datasource through the supervisor against the same program into a bare pipe reader, a Python \
        worker's start → ready and memory beside a Swift one's (python3 must be installed), 16 events in: POST /api/events → \
        the released wait_event step (store on) against the control socket and GET /livez, and one event's cost with 10,000 \
        runs waiting on its type, found by the wait index against a scan of every run's condition, 17 chat with a language model: \
        the chat path's own overhead around a model call (a stub answering at once) against the bare call to the stub, 18 voice \
        messages: a 3-second WAV → the answer's text against the bare PocketSphinx decode of it. Figures 4 and 6 also run \
        with the HTTP server on. Figure 13's profiling: AGENT_BENCH_POSTGRES_OPTIONS (server settings, e.g. \
        "shared_preload_libraries=pg_stat_statements": each burst's statements are printed), AGENT_BENCH_FLEET_AGENTS \
        (e.g. "4": only that size).

        --markdown prints benchmarks/README.md instead: the method of every figure and one table, every figure with the baselines \
        measured in the same run and its target, under the commit and the machine. Keep a run with \
        --json > run.json; --from-json run.json makes the table (or --markdown) from it without measuring.

        Exit status: 0 when every run completed without losing an event, 1 otherwise, 2 when the bench \
        could not start (or --from-json could not read its report).
        """,
        version: AgentVersion.line(for: "agent-bench")
    )

    @Flag(name: .long, help: "Print the figures as JSON instead of a table.")
    var json = false

    @Flag(name: .long, help: "Print benchmarks/README.md instead: the method and one table of every figure with its baselines measured in the same run, its target, the commit and the machine.")
    var markdown = false

    @Option(name: .long, help: "Measure nothing: make the table (or --markdown, --json) from a report saved with --json.")
    var fromJson: String?

    @Flag(name: .long, help: "A short run (about a minute): fewer repetitions, fewer events, 5 s idle windows.")
    var quick = false

    @Option(name: .long, parsing: .upToNextOption, help: "Run only these figures (e.g. --only 3 4).")
    var only: [Int] = []

    @Option(name: .long, help: "Figure 11: how long the schedules fire, in seconds (default 60; 15 with --quick).")
    var scheduleSeconds: Int?

    @Flag(name: .long, help: "Keep the scratch folder (generated agents, the embedded supervisor's log).")
    var keep = false

    static let figures = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]

    func validate() throws {
        if json && markdown { throw ValidationError("give one of --json and --markdown") }
        if fromJson != nil, !only.isEmpty || quick || scheduleSeconds != nil || keep {
            throw ValidationError("--from-json measures nothing: it takes no --only, --quick, --schedule-seconds or --keep")
        }
        if let unknown = only.first(where: { !Self.figures.contains($0) }) {
            throw ValidationError("no figure \(unknown); the figures are \(Self.figures.map(String.init).joined(separator: ", "))")
        }
        if let scheduleSeconds, !(5...3600).contains(scheduleSeconds) {
            throw ValidationError("--schedule-seconds must be from 5 to 3600, not \(scheduleSeconds)")
        }
    }

    func run() throws {
        if let fromJson {
            do {
                print(render(try BenchReport.read(fromJson)))
            } catch {
                FileHandle.standardError.write(Data("agent-bench: \(error)\n".utf8))
                throw ExitCode(2)
            }
            return
        }
        signal(SIGPIPE, SIG_IGN)
        // SQLite set as agent-control sets it, whichever figure opens it first (the floors too).
        AgentStore.configureSQLite()
        HTTPBench.exportToken()
        BenchEnvironment.raiseOpenFileLimit()
        let environment: BenchEnvironment
        do {
            environment = try BenchEnvironment(quick: quick)
        } catch {
            FileHandle.standardError.write(Data("agent-bench: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let logPath = environment.scratch + "/supervisor.log"
        let logFD = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(logFD) }

        var report = BenchReport(machine: MachineInfo.current(packageDirectory: environment.packageDirectory), quick: quick)
        if report.machine.build != "release" { Progress.say("warning: this is a debug build; figures are not meaningful") }
        let load = MachineLoad.sample()
        report.machine.load = load
        Progress.say(String(format: "machine busy before the run: %.0f %% of %d cores", load.busyPercent, report.machine.cores))
        for stray in load.strays {
            Progress.say("warning: \(stray) is running and was not started by the bench (left by a test?); the figures will suffer")
        }
        let selected = only.isEmpty ? Self.figures : Self.figures.filter(only.contains)
        let started = Clock.now()
        for number in selected {
            let figureStart = Clock.now()
            let usage = MachineLoad.Usage.now()
            Progress.say("figure \(number)…")
            var section: Section = switch number {
            case 1: ModuleLoadBench.run(environment)
            case 2: SettingsBench.run(environment)
            case 3: RestartBench.run(environment, logFD: logFD)
            case 4: RoutingBench.run(environment, logFD: logFD)
            case 5: StoreBench.run(environment, logFD: logFD)
            case 6: IdleBench.run(environment)
            case 7: ScaleBench.run(environment)
            case 8: ColdStartBench.run(environment)
            case 9: HTTPBench.run(environment)
            case 10: TaskBench.run(environment)
            case 11: ScheduleBench.run(environment, seconds: scheduleSeconds ?? (quick ? 15 : 60))
            case 12: WorkflowBench.run(environment)
            case 14: PatternBench.run(environment)
            case 15: PythonModuleBench.run(environment, logFD: logFD)
            case 16: EventsBench.run(environment, logFD: logFD)
            case 17: ChatBench.run(environment)
            case 18: VoiceBench.run(environment)
            default:
                #if Fleet
                FleetBench.run(environment)
                #else
                Section.notBuilt(13, "A fleet on PostgreSQL", because: "this agent-bench was built without the trait Fleet (--disable-default-traits); build it with the default traits to measure the fleet")
                #endif
            }
            let now = MachineLoad.Usage.now()
            section.othersCPU = now.othersPercent(since: usage, unreaped: section.unreapedCPUSeconds)
            section.stealCPU = now.stealPercent(since: usage)
            report.sections.append(section)
            Progress.say(String(format: "figure %d done in %.1f s (other processes: %.0f %% of a core)%@", number, Clock.now() - figureStart,
                                section.othersCPU ?? 0, section.failures.isEmpty ? "" : " with \(section.failures.count) failure(s)"))
        }
        Progress.say(String(format: "all done in %.0f s", Clock.now() - started))

        print(render(report))
        let failed = !report.failures.isEmpty
        if failed || keep {
            Progress.say("scratch folder kept: \(environment.scratch) (embedded supervisor log: \(logPath))")
        } else {
            environment.removeScratch()
        }
        if failed { throw ExitCode(1) }
    }

    /// The report as asked: JSON, the Markdown table, or the table for people.
    func render(_ report: BenchReport) -> String {
        json ? report.json() : markdown ? BenchReadme.render(report) : TableRenderer.render(report)
    }
}
