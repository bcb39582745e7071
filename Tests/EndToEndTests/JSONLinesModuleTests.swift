import AgentTestSupport
import Foundation
import Testing

/// `jsonl/1` modules (a folder with `module.json` and a program) under the real agent-control:
/// validated before anything starts, bridged by their workers, supervised like every process.
@Suite(.ownThreads) struct JSONLinesModuleTests {
    private typealias Fixture = ProgramModuleFixture

    /// A datasource that says ready, emits `count` trades and waits for the stop.
    private static let trades = Fixture.prelude + """
        send({"ready": True})
        for i in range(start["settings"]["count"]):
            send({"emit": {"type": "trade", "payload": {"pair": start["settings"]["pair"], "i": i}}})
        for frame in frames():
            if frame.get("stop"):
                break

        """

    private static let feedManifest = Fixture.manifest(name: "pyfeed", types: [
        ("py_trades", "datasource", "feed.py",
         #""settings": {"type": "object", "additionalProperties": false, "required": ["pair"], "properties": {"pair": {"type": "string", "minLength": 1}, "count": {"type": "integer", "minimum": 0, "default": 3}}}"#),
    ])

    private func agent(_ directory: String, modules: String, processes: String, quiet: Bool = false) throws -> AgentRun {
        try AgentRun(settings: #"{"enabled_modules": \#(modules), "processes": {\#(processes)}}"#,
                     arguments: ["--no-build", "--json"] + (quiet ? ["--quiet"] : []), directory: directory)
    }

    @Test func aBrokenManifestIsRefusedWithItsFileAndPointerBeforeAnythingStarts() throws {
        let manifest = #"{"name": "broken", "version": "1.0.0", "protocol": "jsonl/1", "process_types": {"src": {"kind": "datasource", "command": "python3 feed.py", "setings": {}}, "mon": {"kind": "watcher", "command": ["python3", "m.py"], "settings": {"type": "object", "properties": {"x": {"pattern": "("}}}}}}"#
        let directory = try Fixture.write(name: "broken", manifest: manifest)
        try #"{"enabled_modules": ["broken"], "processes": {"a": {"type": "src"}}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        let output = result.stdout + result.stderr
        #expect(result.status != 0, "\(output)")
        #expect(output.contains("modules/broken/module.json"), "\(output)")
        #expect(output.contains(#"/process_types/src/command: expected a non-empty array of strings, the program and its arguments (e.g. ["python3", "source.py"]), at most 256, found "python3 feed.py" (string)"#), "\(output)")
        #expect(output.contains(#"/process_types/src/setings: expected one of the members"#) && output.contains(#"found "setings"; did you mean "settings"?"#), "\(output)")
        #expect(output.contains(#"/process_types/mon/kind: expected one of datasource, monitor, logic_adapter, task, found "watcher" (string)"#), "\(output)")
        #expect(output.contains("/process_types/mon/settings/properties/x/pattern"), "\(output)")
    }

    /// The module's process gets its schema's defaults filled in; a default the schema itself
    /// refuses reached the module unchecked. It is an issue of the settings now, at the
    /// setting's pointer, naming the module.
    @Test func aDefaultTheModulesOwnSchemaRefusesIsAnIssueAtItsSetting() throws {
        let settings = #""settings": {"type": "object", "properties": {"port": {"type": "integer", "default": "eighty"}, "host": {"type": "string", "default": "localhost"}}}"#
        let manifest = Fixture.manifest(name: "baddefault", types: [("bad_default", "datasource", "feed.py", settings)])
        let directory = try Fixture.write(name: "baddefault", manifest: manifest, files: ["feed.py": Fixture.prelude])
        try #"{"enabled_modules": ["baddefault"], "processes": {"a": {"type": "bad_default"}, "b": {"type": "bad_default", "port": 8080}}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        let output = result.stdout + result.stderr
        #expect(result.status == 2, "\(output)")
        #expect(output.contains("/processes/a/port") && output.contains("the default that module baddefault declares for this setting fails its own schema"), "\(output)")
        #expect(!output.contains("/processes/b/port"), "a process that sets it is valid: \(output)")
    }

    @Test func aProcessOfAProgramModuleIsValidatedAgainstItsManifestSchema() throws {
        let directory = try Fixture.write(name: "pyfeed", manifest: Self.feedManifest, files: ["feed.py": Self.trades])
        try #"{"enabled_modules": ["pyfeed"], "processes": {"a": {"type": "py_trades", "pair": 7, "cnt": 1}, "b": {"type": "py_trades", "pair": "ETH/USD"}}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("agent-control", ["validate", "--settings", directory + "/settings.json", "--no-build", "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let pointers = Set((report["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String })
        #expect(pointers == ["/processes/a/pair", "/processes/a"], "\(result.stdout)")
        #expect(result.stdout.contains(#"unknown property \"cnt\"; did you mean \"count\"?"#))
        let modules = report["modules"] as? [[String: Any]] ?? []
        #expect((modules.first?["file"] as? String)?.hasSuffix("/modules/pyfeed/module.json") == true, "\(modules)")
        #expect(modules.first?["process_types"] as? [String] == ["py_trades"])
    }

    @Test func aProgramAnotherUserCouldChangeIsRefusedLikeALibrary() throws {
        let directory = try Fixture.write(name: "pyfeed", manifest: Self.feedManifest, files: ["feed.py": Self.trades])
        let program = directory + "/modules/pyfeed/feed.py"
        #expect(chmod(program, 0o646) == 0)
        try #"{"enabled_modules": ["pyfeed"], "processes": {"b": {"type": "py_trades", "pair": "ETH/USD"}}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        #expect(result.status != 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("refusing to load it: the file \(program) is writable by everyone (mode 646); fix with `chmod go-w \(program)`"), "\(result.stdout)")
    }

    @Test func aProgramDatasourcesEventsReachASwiftMonitor() throws {
        let directory = try Fixture.write(name: "pyfeed", manifest: Self.feedManifest, files: ["feed.py": Self.trades])
        let run = try agent(directory, modules: #"["pyfeed", "sample"]"#, processes: #"""
            "feed": {"type": "py_trades", "pair": "ETH/USD", "count": 5},
            "busy": {"type": "trade_frequency", "window": 600, "threshold": 3, "report_every": 0}
            """#)
        let alert = run.waitForLine { $0.contains(#""kind":"message""#) && $0.contains(#""source":"busy""#) && $0.contains("ETH/USD: 4 trade events") }
        #expect(alert != nil, "\(run.transcript)")
        #expect(run.stdoutLines.contains { $0.contains(#""source":"feed""#) && $0.contains(#""type":"trade""#) })
        #expect(run.stop() == 0)
        #expect(run.stderrLines.contains { $0.contains("[feed] worker pid") && $0.contains("stopped (exited with status 0)") }, "\(run.transcript)")
    }

    @Test func aProgramMonitorReceivesTheEventsItSubscribesTo() throws {
        let monitor = Fixture.prelude + """
            send({"ready": True})
            seen = 0
            for frame in frames():
                if frame.get("stop"):
                    break
                event = frame["event"]
                seen += 1
                send({"emit": {"type": "seen", "payload": {"n": seen, "from": event["source"], "pair": event["payload"]["pair"]}}})

            """
        let manifest = Fixture.manifest(name: "pymon", types: [("py_seen", "monitor", "mon.py", #""subscribe": ["trade"]"#)])
        let directory = try Fixture.write(name: "pymon", manifest: manifest, files: ["mon.py": monitor])
        let run = try agent(directory, modules: #"["pymon", "sample"]"#, processes: #"""
            "trades": {"type": "trade_feed", "pairs": ["BTC/USD"], "interval": 0.05, "seed": 1},
            "watch": {"type": "py_seen"}
            """#)
        let seen = run.waitForLine { $0.contains(#""source":"watch""#) && $0.contains(#""type":"seen""#) && $0.contains(#""n":3"#) }
        #expect(seen?.contains(#""from":"trades""#) == true && seen?.contains(#""pair":"BTC/USD""#) == true, "\(run.transcript)")
        #expect(run.stop() == 0)
    }

    @Test func aProgramAdapterAnswersTheChatFromTheEventsItSubscribesTo() throws {
        let adapter = Fixture.prelude + """
            send({"ready": True})
            last = None
            for frame in frames():
                if frame.get("stop"):
                    break
                if "event" in frame:
                    last = frame["event"]["payload"]["pair"]
                elif "chat" in frame:
                    sure = 0.9 if "last trade" in frame["chat"]["message"] else 0.0
                    send({"answer": {"confidence": sure, "text": "the last trade was %s (%s)" % (last, start["settings"]["tag"])}})

            """
        let manifest = Fixture.manifest(name: "pyadapt", types: [
            ("last", "logic_adapter", "adapter.py", #""subscribe": ["trade"], "examples": ["what was the last trade?"], "settings": {"type": "object", "properties": {"tag": {"type": "string", "default": "py"}}}"#),
        ])
        let directory = try Fixture.write(name: "pyadapt", manifest: manifest, files: ["adapter.py": adapter])
        let run = try agent(directory, modules: #"["pyadapt", "sample"]"#, processes: #"""
            "trades": {"type": "trade_feed", "pairs": ["SOL/USD"], "interval": 0.05, "seed": 3},
            "chat": {"type": "chatbot", "logic_adapters": ["pyadapt.last", "features"]}
            """#, quiet: true)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[chat] ready in") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(run.transcript)")
        var answer = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !answer.contains("SOL/USD") {
            answer = try runProgram("agent-control", ["chat", "what was the last trade?", "--settings", run.settingsFile]).stdout
        }
        #expect(answer.contains("the last trade was SOL/USD (py)"), "\(answer)\n\(run.transcript)")
        #expect(run.stop() == 0)
        #expect(!run.stderrLines.contains { $0.contains("left behind by a dead worker") }, "\(run.transcript)")
    }

    @Test func garbageAndOverlongLinesAreCountedAndTheProcessStaysUp() throws {
        let noisy = Fixture.prelude + """
            send({"ready": True})
            sys.stdout.write("this is not json\\n")
            send({"emit": 3})
            send({"emit": {"type": "x"}, "extra": 1})
            send({"start": {"settings": {}, "process": "me"}})
            sys.stdout.write("[" + "1," * (1 << 20) + "1]\\n")
            sys.stdout.flush()
            send({"emit": {"type": "still_here", "payload": {"ok": True}}})
            for frame in frames():
                if frame.get("stop"):
                    break

            """
        let manifest = Fixture.manifest(name: "noisy", types: [("noise", "datasource", "noisy.py", "")])
        let directory = try Fixture.write(name: "noisy", manifest: manifest, files: ["noisy.py": noisy])
        let run = try agent(directory, modules: #"["noisy"]"#, processes: #""loud": {"type": "noise"}"#)
        #expect(run.waitForLine { $0.contains(#""source":"loud""#) && $0.contains(#""type":"still_here""#) } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[loud]") && $0.contains("refused a line of the program (not_json)") } != nil, "\(run.transcript)")
        var refused: Int?
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let status = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
            let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            let process = (object?["processes"] as? [[String: Any]])?.first { $0["name"] as? String == "loud" }
            refused = process?["lines_refused"] as? Int
            if refused == 5 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(refused == 5, "\(run.transcript)")
        #expect(!run.stderrLines.contains { $0.contains("[loud]") && $0.contains("restarting") }, "\(run.transcript)")
        #expect(run.workerPids("loud").count == 1)
        #expect(run.stop() == 0)
    }

    @Test func aFloodingProgramIsHeldBackByItsSubscribersFullQueue() throws {
        let flood = Fixture.prelude + """
            send({"ready": True})
            for i in range(1000000):
                send({"emit": {"type": "fault_tick", "payload": {"n": i, "pad": "x" * 100}}})
            for frame in frames():
                if frame.get("stop"):
                    break

            """
        let manifest = Fixture.manifest(name: "flood", types: [("flood", "datasource", "flood.py", "")])
        let directory = try Fixture.write(name: "flood", manifest: manifest, files: ["flood.py": flood])
        let run = try agent(directory, modules: #"["flood", "faults"]"#, processes: #"""
            "tide": {"type": "flood"},
            "sink": {"type": "slow_sink", "delay_ms": 1, "queue": {"limit_bytes": 65536, "when_full": "block"}}
            """#, quiet: true)
        var paused = false
        var last: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !paused {
            let status = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
            let processes = (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["processes"] as? [[String: Any]] ?? []
            let tide = processes.first { $0["name"] as? String == "tide" } ?? [:]
            // The count, not the state: a sampled state can miss a pause between two polls.
            paused = tide["paused"] as? Bool == true || (tide["times_paused"] as? Int ?? 0) > 0
            last = processes.first { $0["name"] as? String == "sink" } ?? [:]
        }
        // The program's writes block while the sink's queue is full: it is paused, not dropped from.
        #expect(paused, "\(run.transcript)")
        #expect(last["events_dropped"] as? Int == 0, "\(last)")
        #expect(!run.stderrLines.contains { $0.contains("[tide]") && $0.contains("restarting") }, "\(run.transcript)")
        #expect(run.stop() == 0)
    }

    /// Alerts join the chat, which no retention deletes: a program raising them flat out wrote
    /// 650,000 chat lines (1.6 GB) in 25 s. A burst of 20 is kept per source, then one a
    /// second; those left out are counted in a line of their own.
    @Test func aProgramRaisingAlertsFlatOutPutsABoundedNumberInTheChat() throws {
        let alerts = Fixture.prelude + """
            send({"ready": True})
            for i in range(500):
                send({"alert": {"text": "alert %d" % i}})
            time.sleep(1.5)
            send({"alert": {"text": "the last alert"}})
            for frame in frames():
                if frame.get("stop"):
                    break

            """
        let manifest = Fixture.manifest(name: "alarms", types: [("alarms", "datasource", "alarms.py", "")])
        let directory = try Fixture.write(name: "alarms", manifest: manifest, files: ["alarms.py": alerts])
        let began = Date()
        let run = try agent(directory, modules: #"["alarms"]"#, processes: #"""
            "bell": {"type": "alarms"}, "chat": {"type": "chatbot", "logic_adapters": ["status"]}
            """#, quiet: true)
        var history = ""
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline, !history.contains("the last alert") {
            history = try runProgram("agent-control", ["chat", "history", "--settings", run.settingsFile]).stdout
            if !history.contains("the last alert") { Thread.sleep(forTimeInterval: 0.1) }
        }
        let elapsed = Date().timeIntervalSince(began)
        let kept = history.components(separatedBy: "\n").filter { $0.contains("alert ") && !$0.contains("left out") }.count
        #expect(history.contains("the last alert"), "\(history.suffix(2000))\n\(run.transcript)")
        // A burst of 20, then one a second at most, over the whole time the agent ran.
        #expect(kept >= 20 && Double(kept) <= 20 + elapsed + 1, "\(kept) alert lines in \(elapsed) s")
        #expect(history.contains("alerts of bell left out of the chat"), "\(history.suffix(2000))")
        #expect(run.stop() == 0)
    }

    /// One program flooding its stderr rotated 60 MB of the agent's log in 0.2 s. The log takes
    /// a burst of 4 MiB of a process's output, then 64 KiB a second, and counts what it left
    /// out; the process's own log (`agent-control logs`) has its newest lines.
    @Test func aProgramFloodingItsStderrCannotPushEverythingElseOutOfTheAgentsLog() throws {
        let noisy = Fixture.prelude + """
            send({"ready": True})
            for i in range(1000):
                sys.stderr.write("E" * 10000 + "\\n")
            sys.stderr.flush()
            time.sleep(2)
            sys.stderr.write("the flood is over\\n")
            sys.stderr.flush()
            for frame in frames():
                if frame.get("stop"):
                    break

            """
        let manifest = Fixture.manifest(name: "noisy", types: [("noisy", "datasource", "noisy.py", "")])
        let directory = try Fixture.write(name: "noisy", manifest: manifest, files: ["noisy.py": noisy])
        let began = Date()
        let run = try agent(directory, modules: #"["noisy"]"#, processes: #""din": {"type": "noisy"}"#, quiet: true)
        let line = run.waitForLine(onStderr: true, timeout: 90) { $0.contains("the flood is over") }
        let elapsed = Date().timeIntervalSince(began)
        #expect(line != nil, "\(run.transcript.suffix(3000))")
        let flood = run.stderrLines.filter { $0.contains("EEEEEEEEEE") }.count
        let allowed = (Double(4 << 20) + Double(64 << 10) * elapsed) / 10_064
        #expect(flood < 1000 && Double(flood) <= allowed + 1, "\(flood) lines of 10 KB in \(elapsed) s")
        #expect(run.stderrLines.contains { $0.contains("of output, log calls and messages of din left out of this log") && $0.contains("agent-control logs din") }, "\(run.transcript.suffix(3000))")
        let logs = try runProgram("agent-control", ["logs", "din", "--settings", run.settingsFile])
        #expect(logs.stdout.contains("the flood is over"), "\(logs.stdout.suffix(500))\(logs.stderr)")
        #expect(run.stop() == 0)
    }

    /// A program sending messages in a loop filled the agent's log and its rotations in 10–20 s:
    /// the stderr cap did not cover them. A process's messages and `log` calls share its
    /// output's allowance now.
    @Test func aProgramFloodingMessagesIsHeldToItsShareOfTheAgentsLog() throws {
        let chatty = Fixture.prelude + """
            import threading
            send({"ready": True})
            for i in range(1000):
                send({"message": {"text": "M" * 10000}})
            def tick():
                while True:
                    time.sleep(0.5)
                    sys.stderr.write("tick\\n")
                    sys.stderr.flush()
            threading.Thread(target=tick, daemon=True).start()
            for frame in frames():
                if frame.get("stop"):
                    break

            """
        let manifest = Fixture.manifest(name: "chatty", types: [("chatty", "datasource", "chatty.py", "")])
        let directory = try Fixture.write(name: "chatty", manifest: manifest, files: ["chatty.py": chatty])
        let began = Date()
        let run = try agent(directory, modules: #"["chatty"]"#, processes: #""din": {"type": "chatty"}"#, quiet: true)
        // Said at the first line let through after some were left out: a tick.
        let warning = run.waitForLine(onStderr: true, timeout: 120) { $0.contains("of output, log calls and messages of din left out of this log") }
        let elapsed = Date().timeIntervalSince(began)
        #expect(warning != nil, "\(run.transcript.suffix(3000))")
        // The messages come on stdout, through a thread of their own: the first is waited for.
        #expect(run.waitForLine { $0.contains("MMMMMMMMMM") } != nil, "\(run.transcript.suffix(3000))")
        let flood = run.stdoutLines.filter { $0.contains("MMMMMMMMMM") }.count
        let allowed = (Double(4 << 20) + Double(64 << 10) * elapsed) / 10_065
        #expect(flood > 0 && flood < 1000 && Double(flood) <= allowed + 1, "\(flood) messages of 10 KB in \(elapsed) s")
        #expect(run.stop() == 0)
    }

    /// What a module wrote is printed by `logs` and `events` with its controls escaped: an
    /// escape sequence retitled and recoloured the reader's terminal, a bidirectional override
    /// showed the rest of the line reversed.
    @Test func logsAndEventsShowTheControlsAModuleWroteEscaped() throws {
        let sly = Fixture.prelude + """
            send({"ready": True})
            sys.stderr.write("title \\x1b]0;PWNED\\x07 red \\x1b[31mred\\n")
            sys.stderr.flush()
            send({"emit": {"type": "sly", "payload": {"text": "abc\\u202edef"}}})
            for frame in frames():
                if frame.get("stop"):
                    break

            """
        let manifest = Fixture.manifest(name: "sly", types: [("sly", "datasource", "sly.py", "")])
        let directory = try Fixture.write(name: "sly", manifest: manifest, files: ["sly.py": sly])
        let run = try agent(directory, modules: #"["sly"]"#, processes: #""fox": {"type": "sly"}"#, quiet: true)
        #expect(run.waitForLine(onStderr: true, timeout: 60) { $0.contains("title") } != nil, "\(run.transcript)")
        var logs = ""
        var events = ""
        let deadline = Date().addingTimeInterval(60)
        repeat {
            logs = try runProgram("agent-control", ["logs", "fox", "--settings", run.settingsFile]).stdout
            events = try runProgram("agent-control", ["events", "--source", "fox", "--settings", run.settingsFile]).stdout
            if logs.contains("title"), events.contains("sly") { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        #expect(logs.contains("title \\u{1B}]0;PWNED\\u{7} red \\u{1B}[31mred"), "\(logs)")
        #expect(!logs.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" }, "\(logs.debugDescription)")
        #expect(events.contains("abc\\u{202E}def") && !events.unicodeScalars.contains("\u{202E}"), "\(events.debugDescription)")
        #expect(run.stop() == 0)
    }

    @Test func aProgramThatNeverSaysReadyIsKilledAtItsStartTimeout() throws {
        let silent = Fixture.prelude + "time.sleep(3600)\n"
        let manifest = Fixture.manifest(name: "mute", types: [("mute", "datasource", "mute.py", "")])
        let directory = try Fixture.write(name: "mute", manifest: manifest, files: ["mute.py": silent])
        let run = try agent(directory, modules: #"["mute"]"#, processes: #""quiet": {"type": "mute", "start_timeout": 1, "restart": "never"}"#)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[quiet] did not report ready within 1 s; killing it") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[quiet] worker pid") && $0.contains("(start timeout)") && $0.contains("before it was ready") } != nil, "\(run.transcript)")
        #expect(run.stop() == 0)
    }

    @Test func aCrashingProgramIsRestartedByItsPolicyUntilTheStartLimit() throws {
        let crash = Fixture.prelude + """
            send({"ready": True})
            send({"error": {"message": "the station is unreachable"}})
            sys.exit(3)

            """
        let manifest = Fixture.manifest(name: "crashy", types: [("crashy", "datasource", "crash.py", "")])
        let directory = try Fixture.write(name: "crashy", manifest: manifest, files: ["crash.py": crash])
        let run = try agent(directory, modules: #"["crashy"]"#, processes: #""c": {"type": "crashy", "restart": {"initial_delay": 0.05, "max_restarts": 2, "within": 600}}"#)
        let failed = run.waitForLine(onStderr: true) { $0.contains("[c]") && $0.contains("the start limit") }
        // The reason the process keeps says how its program ended, not only its worker's status.
        #expect(failed?.contains("restarted 2 times within 600 s (the start limit); last: exited with status 1: the program exited with status 3: the station is unreachable") == true,
                "\(run.transcript)")
        let restarts = run.stderrLines.filter { $0.contains("[c] worker pid") && $0.contains("restarting in") }
        #expect(restarts.count == 2, "\(run.transcript)")
        #expect(restarts.allSatisfy { $0.contains("the program exited with status 3: the station is unreachable") }, "\(run.transcript)")
        #expect(run.stop() == 0)
    }
}
