import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import JSONSchema
import Logging

/// The client side of daemon control: `agent-control start|stop|restart|status|reload|process`.
/// Each command prints what it did and returns the exit status.
public struct AgentDaemon {
    public var launcher: AgentLauncher
    public var paths: AgentPaths

    public init(launcher: AgentLauncher) {
        self.launcher = launcher
        self.paths = launcher.paths
    }

    static func say(_ text: String) { print(text) }
    public static func fail(_ text: String, code: Int32 = AgentLauncher.ExitCode.failure) -> Int32 {
        TerminalStyle.printError(text)
        return code
    }

    /// A control request that failed: exit status 3 when the agent is not running.
    public static func fail(_ error: ControlError) -> Int32 {
        fail(error.description, code: error.isNotRunning ? AgentLauncher.ExitCode.notRunning : AgentLauncher.ExitCode.failure)
    }

    /// Starts the agent detached, logging to the log file; returns once it answers on its
    /// control socket, or with the agent's own exit status (its log shown) if it did not start.
    public func start(timeout: Double = 600) -> Int32 {
        if let pid = Pidfile.holder(of: paths.pidfile) {
            return Self.fail(Pidfile.HeldError(path: paths.pidfile, pid: pid).description)
        }
        do {
            let created = try paths.createDirectories()
            // Before start.lock is written there: another user's run folder is refused (the
            // agent checks it again when it starts).
            try RunFolder.check(paths.runDirectory, madeByAgent: created || paths.runDirectory == launcher.defaultRunDirectory,
                                logger: Logger(label: "agent-control"))
        } catch {
            return Self.fail("\(error)")
        }
        // One start at a time: a second one would spawn an agent that loses the pidfile to the
        // first and prints the winner's log as if it were its own failure.
        let startLock = Pidfile(path: paths.runDirectory + "/start.lock")
        do {
            try startLock.acquire()
        } catch let error as Pidfile.HeldError {
            if let pid = Pidfile.holder(of: paths.pidfile) {
                return Self.fail(Pidfile.HeldError(path: paths.pidfile, pid: pid).description)
            }
            return Self.fail("another start of this agent is in progress (agent-control start, pid \(error.pid.map(String.init) ?? "unknown")); wait for it, then see `agent-control status`")
        } catch {
            return Self.fail("cannot create \(startLock.path): \(error)")
        }
        // Closed, not removed, at the end: a start racing with the removal could lock a file
        // that no longer has a name while a third one creates a new one.
        defer { withExtendedLifetime(startLock) {} }
        let log = PrivateFiles.open(paths.logFile, flags: O_WRONLY | O_APPEND)
        guard log >= 0 else { return Self.fail("cannot open the log file \(paths.logFile): \(String(cString: strerror(errno)))") }
        defer { close(log) }
        let logStart = lseek(log, 0, SEEK_END)
        let options = launcher.options
        var arguments = ["agent-control", "console", "--daemon", "--settings", AgentPaths.absolute(options.settingsPath),
                         "--run-dir", paths.runDirectory, "--pidfile", paths.pidfile, "--log-file", paths.logFile,
                         "--log-level", options.logLevel.rawValue]
        if !options.build { arguments.append("--no-build") }
        if let configuration = options.configuration { arguments += ["--configuration", configuration] }
        if options.skipInvalid { arguments.append("--skip-invalid") }
        if !options.showEvents { arguments.append("--quiet") }
        if options.json { arguments.append("--json") }
        let executable = AgentLauncher.runtimeDirectory + "/agent-control"
        let spawned = ProcessSpawner.spawn(path: executable, arguments: arguments, environment: ProcessInfo.processInfo.environment,
                                           stdout: log, stderr: log, channel: -1, newGroup: false, newSession: true)
        guard case .success(let pid) = spawned else {
            if case .failure(let error) = spawned { return Self.fail(error.description) }
            return AgentLauncher.ExitCode.failure
        }
        let deadline = EventLoop.now() + timeout
        while EventLoop.now() < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                // Started by hand (`console`) meanwhile: that agent runs; this one had nothing to do.
                if let holder = Pidfile.holder(of: paths.pidfile) {
                    return Self.fail(Pidfile.HeldError(path: paths.pidfile, pid: holder).description)
                }
                let output = Self.tail(of: paths.logFile, from: Int(logStart))
                FileHandle.standardError.write(Data(output.utf8))
                let code = ProcessSpawner.exitCode(status)
                return Self.fail("the agent did not start (\(code.map { "exit status \($0)" } ?? "killed by a signal")); its log is above and in \(paths.logFile)",
                                 code: code.map { $0 == 0 ? AgentLauncher.ExitCode.failure : $0 } ?? AgentLauncher.ExitCode.failure)
            }
            // Started once it answers, its HTTP server listening: one whose port is taken stops
            // the agent (then `stopping`, and its exit above).
            if let answer = try? ControlClient.send(StatusCommand.request(NoFields()), paths: paths, timeout: 2), answer["ok"] == true,
               answer["fronts_starting"] != true, answer["stopping"] != true {
                let count = answer["processes"]?.arrayValue?.count ?? 0
                Self.say("started: pid \(pid), \(count) process(es); log: \(paths.logFile); control: \(paths.socketPath)")
                return AgentLauncher.ExitCode.success
            }
            usleep(20_000)
        }
        return Self.fail("the agent (pid \(pid)) did not answer within \(timeout.compactText) s; see \(paths.logFile)")
    }

    /// Asks the agent to stop every worker and exit; waits until it has.
    public func stop(timeout: Double = 120) -> Int32 {
        let pidfilePID = Pidfile.holder(of: paths.pidfile)
        // The pidfile's agent only when it is this run folder's: `restart` with AGENT_PIDFILE
        // naming another agent's pidfile stopped that other agent.
        let holder = pidfilePID.flatMap { Self.isAgent(of: paths, pid: $0) ? $0 : nil }
        if let holder, let stopped = ControlClient.stoppedError(paths, pid: holder) { return Self.fail(stopped.description) }
        // The agent listening on this run folder's socket, whatever the pidfile says: a
        // pidfile removed by hand said "not running" while the agent ran.
        let answering: Int32?
        do { answering = try ControlClient.listenerPID(paths) } catch { return Self.fail(error.description) }
        guard let pid = answering ?? holder else {
            guard let other = pidfilePID else {
                Self.say("not running (no live agent holds \(paths.pidfile), nothing answers on \(paths.socketPath))")
                return AgentLauncher.ExitCode.success
            }
            // Held, but by no agent of this folder: nothing is signalled, and a `restart` stops here.
            if let doubt = Pidfile.doubt(paths.pidfile) {
                return Self.fail("nothing answers on \(paths.socketPath), and its pidfile cannot be trusted: \(doubt); nothing was signalled. Check the process holding it (fuser \(paths.pidfile)) and stop it yourself")
            }
            return Self.fail("nothing answers on \(paths.socketPath), and the pidfile \(paths.pidfile) names pid \(other), which is not the agent of \(paths.runDirectory) (it does not hold that folder): nothing was signalled. Check the process holding it (fuser \(paths.pidfile)), or give this agent's own pidfile")
        }
        if let stopped = ControlClient.stoppedError(paths, pid: pid) { return Self.fail(stopped.description) }
        if let answering, answering != pidfilePID {
            Self.say(pidfilePID.map { "the pidfile \(paths.pidfile) names pid \($0), not the agent on \(paths.socketPath) (pid \(answering)): stopping the latter" }
                     ?? "no live agent holds \(paths.pidfile), but pid \(answering) answers on \(paths.socketPath): stopping it")
        }
        do {
            let answer = try ControlClient.send(StopCommand.request(NoFields()), paths: paths)
            guard answer["ok"] == true else { return Self.fail(answer["error"]?.stringValue ?? "the agent refused to stop") }
        } catch {
            // A stopped agent would take a SIGTERM only once resumed: said, nothing signalled
            // (the request's error says whether the stop was written and waits for it).
            if let stopped = ControlClient.stoppedError(paths, pid: pid) {
                return Self.fail(error.description.contains("is stopped") ? error.description : stopped.description)
            }
            // The socket is gone but the process lives: fall back to SIGTERM, only for a pid
            // this user wrote (another user's pidfile could name any process).
            if let doubt = Pidfile.doubt(paths.pidfile) {
                return Self.fail("the agent does not answer on \(paths.socketPath) (\(error)), and its pidfile cannot be trusted: \(doubt); nothing was signalled. Check the process holding it (fuser \(paths.pidfile)) and stop it yourself")
            }
            kill(pid, SIGTERM)
        }
        let deadline = EventLoop.now() + timeout
        let started = ProcStat.read(pid)?.startTime
        // Until its pidfile is free too: a `start` right after (`restart`) takes it. The same
        // process (its start time): a pid used again meanwhile is not waited for.
        func runs() -> Bool { ProcStat.read(pid).map { $0.state != "Z" && $0.state != "X" && $0.startTime == started } ?? false }
        while runs() || Pidfile.holder(of: paths.pidfile) == pid {
            guard EventLoop.now() < deadline else { return Self.fail("the agent (pid \(pid)) is still running after \(timeout.compactText) s") }
            if let stopped = ControlClient.stoppedError(paths, pid: pid) { return Self.fail(stopped.description) }
            usleep(20_000)
        }
        Self.say("stopped (pid \(pid))")
        return AgentLauncher.ExitCode.success
    }

    /// Whether process `pid` is the agent of this run folder: an agent keeps its run folder
    /// open (for its control socket).
    static func isAgent(of paths: AgentPaths, pid: Int32) -> Bool {
        var folder = stat()
        guard stat(paths.runDirectory, &folder) == 0 else { return false }
        let descriptors = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []).contains { name in
            var info = stat()
            return stat(descriptors + "/" + name, &info) == 0 && info.st_dev == folder.st_dev && info.st_ino == folder.st_ino
        }
    }

    public func restart() -> Int32 {
        let stopped = stop()
        guard stopped == 0 else { return stopped }
        return start()
    }

    /// Prints the table of processes (or JSON).
    public func status(json: Bool) -> Int32 {
        let answer: JSONValue
        do {
            answer = try ControlClient.send(StatusCommand.request(NoFields()), paths: paths)
        } catch {
            // An agent that does not answer (stopped, or busy past the timeout) is running: 1,
            // as the exit status table says, not 3.
            if json {
                print(JSONValue.object(["ok": false, "running": .bool(!error.isNotRunning), "error": .string(error.description)]).serialized())
            } else {
                // The error says it ("the agent is not running (…)", "… did not answer …") once.
                Self.say(error.description)
            }
            return error.isNotRunning ? AgentLauncher.ExitCode.notRunning : AgentLauncher.ExitCode.failure
        }
        // A refusal (e.g. the agent is at its limit of control connections) is not a status:
        // it printed an empty table ("agent pid ?, up ?") and exited 0.
        let refused = answer["ok"] != true
        if json {
            print(answer.serialized(pretty: true))
            return refused ? AgentLauncher.ExitCode.failure : AgentLauncher.ExitCode.success
        }
        if refused { return Self.fail(answer["error"]?.stringValue ?? "the agent did not give its status") }
        print(StatusTable.render(answer))
        return AgentLauncher.ExitCode.success
    }

    /// `reload`: in words, or with `json` the answer as it is (exit statuses alike).
    public func reload(json: Bool = false) -> Int32 {
        do {
            let answer = try ControlClient.send(ReloadCommand.request(NoFields()), paths: paths, timeout: 120)
            if json {
                print(answer.serialized())
                return answer["ok"] == true ? AgentLauncher.ExitCode.success
                    : answer["errors"] != nil ? AgentLauncher.ExitCode.invalidConfiguration : AgentLauncher.ExitCode.failure
            }
            if answer["ok"] == true {
                func names(_ key: String) -> String {
                    let list = answer[key]?.arrayValue?.compactMap(\.stringValue) ?? []
                    return list.isEmpty ? "-" : list.joined(separator: ", ")
                }
                Self.say("reloaded. kept: \(names("kept")); restarted: \(names("restarted")); started: \(names("started")); stopped: \(names("stopped"))")
                for note in answer["notes"]?.arrayValue?.compactMap(\.stringValue) ?? [] { Self.say("note: \(note)") }
                return AgentLauncher.ExitCode.success
            }
            // Without "errors" the request itself was refused (busy, stopping): not invalid settings.
            guard answer["errors"] != nil, let lines = answer["error"]?.stringValue?.split(separator: "\n") else {
                return Self.fail("reload refused: \(answer["error"]?.stringValue ?? "unknown error"); the running configuration stays")
            }
            TerminalStyle.printError("reload refused; the running configuration stays:\n\(lines.map { "  \($0)" }.joined(separator: "\n"))")
            return AgentLauncher.ExitCode.invalidConfiguration
        } catch {
            return Self.fail(error)
        }
    }

    public func process(_ action: String, name: String) -> Int32 {
        guard let known = ProcessCommand.Action(rawValue: action) else {
            return Self.fail("unknown process action \"\(action)\"; known: \(ProcessCommand.Action.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        do {
            let answer = try ControlClient.send(ProcessCommand.request(.init(name: name, action: known)), paths: paths)
            guard answer["ok"] == true else { return Self.fail(answer["error"]?.stringValue ?? "refused") }
            if let replicas = answer["processes"]?.arrayValue {
                let states = replicas.map { "\($0["name"]?.stringValue ?? "?") \($0["state"]?.stringValue ?? "?")" }
                Self.say("\(name): \(action) requested for its \(replicas.count) replicas (now \(states.joined(separator: ", ")))")
                return AgentLauncher.ExitCode.success
            }
            let state = answer["process"]?["state"]?.stringValue ?? "?"
            Self.say("\(name): \(action) requested (now \(state))")
            return AgentLauncher.ExitCode.success
        } catch {
            return Self.fail(error)
        }
    }

    static func tail(of file: String, from offset: Int) -> String {
        guard let handle = FileHandle(forReadingAtPath: file) else { return "" }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(max(0, offset)))
        let data = (try? handle.readToEnd()) ?? Data()
        return String(decoding: data.suffix(16 << 10), as: UTF8.self)
    }
}

/// The `agent-control status` table.
enum StatusTable {
    static func render(_ answer: JSONValue) -> String {
        let processes = answer["processes"]?.arrayValue ?? []
        var rows: [[String]] = [["NAME", "TYPE", "STATE", "PID", "FOR", "CPU", "MEM", "RESTARTS", "LAST EXIT", "EVENTS OUT/IN/DROPPED"]]
        for p in processes {
            var state = p["state"]?.stringValue ?? "?"
            if let retry = p["retry_in"]?.numberValue?.doubleValue { state += " (retry in \(String(format: "%.1f", max(0, retry))) s)" }
            if let code = p["exit_code"]?.numberValue?.intValue { state += " (\(code))" }
            if state == "suspended" { state = "stopped (\(p["stop_signal"]?.stringValue ?? "signal"))" }
            rows.append([
                p["name"]?.stringValue ?? "?",
                p["module"]?.stringValue.map { "\(p["type"]?.stringValue ?? "?") (\($0))" } ?? p["type"]?.stringValue ?? "?",
                state,
                p["pid"]?.numberValue?.intValue.map(String.init) ?? "-",
                p["state_seconds"]?.numberValue.map { duration($0.doubleValue) } ?? "-",
                p["cpu_seconds"]?.numberValue.map { cpu($0.doubleValue) } ?? "-",
                p["rss_bytes"]?.numberValue.map { bytes($0.doubleValue) } ?? "-",
                String(p["restarts"]?.numberValue?.intValue ?? 0),
                p["last_exit"]?.stringValue ?? "-",
                "\(p["events_emitted"]?.numberValue?.intValue ?? 0)/\(p["events_delivered"]?.numberValue?.intValue ?? 0)/\(p["events_dropped"]?.numberValue?.intValue ?? 0)",
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.enumerated().map { $0.offset == row.count - 1 ? $0.element : $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        for p in processes {
            if let reason = p["reason"]?.stringValue { lines.append("\(p["name"]?.stringValue ?? "?"): \(reason)") }
            if let refused = p["lines_refused"]?.numberValue?.intValue, refused > 0 {
                lines.append("\(p["name"]?.stringValue ?? "?"): \(refused) line\(refused == 1 ? "" : "s") of its program refused (not jsonl/1; its log says why)")
            }
        }
        if let notifications = answer["notifications"], let line = notificationLine(notifications) { lines.append(line) }
        if let fleet = answer["fleet"] { lines.append(fleetLine(fleet)) }
        let pid = answer["pid"]?.numberValue?.intValue.map(String.init) ?? "?"
        let uptime = answer["uptime"]?.numberValue.map { duration($0.doubleValue) } ?? "?"
        return "agent pid \(pid), up \(uptime)\n" + lines.joined(separator: "\n")
    }

    /// `fleet: joined as host-a (postgres://…), leads the schedules`, or degraded with why.
    static func fleetLine(_ fleet: JSONValue) -> String {
        let agent = fleet["agent_id"]?.stringValue ?? "?", database = fleet["database"]?.stringValue ?? "?"
        let backlog = fleet["backlog"]?.numberValue?.intValue ?? 0
        let waiting = backlog > 0 ? "; \(backlog) change(s) wait for it" : ""
        guard let degraded = fleet["degraded"]?.stringValue else {
            return "fleet: joined as \(agent) (\(database))\(fleet["leads_schedules"] == true ? ", leads the schedules" : "")\(waiting)"
        }
        let joins = fleet["joined"] == false ? "; local processes run, it joins when the database answers" : "; local processes keep running"
        return "fleet: degraded as \(agent) (\(database)): \(degraded)\(joins)\(waiting)"
    }

    /// `task notifications: emails sent 2, failed 1 (…), dropped 0, queued 0; records 3`, or
    /// nil while nothing was notified.
    static func notificationLine(_ n: JSONValue) -> String? {
        func count(_ key: String) -> Int { n[key]?.numberValue?.intValue ?? 0 }
        let keys = ["emails_sent", "emails_failed", "emails_dropped", "failed_attempts", "queued", "records_published", "settings_errors"]
        guard keys.contains(where: { count($0) != 0 }) else { return nil }
        var line = "task notifications: emails sent \(count("emails_sent")), failed \(count("emails_failed")), dropped \(count("emails_dropped")), queued \(count("queued")); records \(count("records_published"))"
        if count("settings_errors") > 0 { line += "; settings errors \(count("settings_errors"))" }
        if let error = n["last_error"]?.stringValue { line += "; last error: \(error)" }
        return line
    }

    /// CPU time: `0.42s`, `3m05s`, `2h10m`.
    static func cpu(_ seconds: Double) -> String {
        seconds < 60 ? String(format: "%.2fs", max(0, seconds)) : duration(seconds)
    }

    /// Resident memory: `812K`, `14.2M`, `1.1G`.
    static func bytes(_ count: Double) -> String {
        let units = ["B", "K", "M", "G", "T"]
        var value = max(0, count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 || value >= 100 ? "\(Int(saturating: value.rounded()))\(units[unit])" : String(format: "%.1f", value) + units[unit]
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(saturating: seconds)
        if s < 60 { return String(format: "%.1fs", seconds) }
        if s < 3600 { return "\(s / 60)m\(s % 60)s" }
        if s < 86400 { return "\(s / 3600)h\(s % 3600 / 60)m" }
        return "\(s / 86400)d\(s % 86400 / 3600)h"
    }
}
