import AgentCore
import AgentSupervision
import CAgentSystem
import Foundation
import JSONSchema

extension CommandTaskRunner {
    /// The variables every command gets besides the runtime's environment and its task's.
    package enum EnvironmentKey {
        package static let runID = "AGENT_TASK_RUN_ID"
        package static let idempotencyKey = "AGENT_TASK_IDEMPOTENCY_KEY"
        package static let attempt = "AGENT_TASK_ATTEMPT"
        package static let name = "AGENT_TASK_NAME"
    }

    /// Spawns the run's program with its pipes in its cgroup (or the agent's containment). Returns
    /// why it could not start (the run then fails with it), nil when it runs.
    package func launch(_ run: CommandRun) -> String? {
        launchLacked = false
        guard let spec = run.start.task.command, let first = spec.arguments.first, !first.isEmpty else {
            return "the task has no command to run (\"command\": [\"/path/to/program\", \"argument\", …])"
        }
        // Read once: a large input is held as its text (``RunInput``).
        let value = run.start.input
        // The input's fields as INPUT_*, under the task's own `env` (which wins).
        let (inputVariables, omitted) = InputEnvironment.variables(for: value)
        if let omitted {
            logger.notice("task \(run.start.task.name): the input's \(omitted) (the whole input is on stdin)")
        }
        var environment = self.environment.filter { !$0.key.hasPrefix(InputEnvironment.prefix) }
        environment.merge(inputVariables) { $1 }
        environment.merge(spec.environment) { $1 }
        environment[EnvironmentKey.runID] = run.runID
        environment[EnvironmentKey.idempotencyKey] = run.start.idempotencyKey
        environment[EnvironmentKey.attempt] = String(run.start.attempt)
        environment[EnvironmentKey.name] = run.start.task.name

        let directory = spec.directory.map { $0.hasPrefix("/") ? $0 : agentDirectory + "/" + $0 } ?? agentDirectory
        var info = stat()
        if stat(directory, &info) != 0 {
            return "cannot run the command in \(directory): \(String(cString: strerror(errno))) (the task's \"cwd\")"
        }
        if info.st_mode & S_IFMT != S_IFDIR {
            return "cannot run the command in \(directory): it is not a folder (the task's \"cwd\")"
        }

        // Checked with the settings; again here for a definition that did not pass that check.
        if let problem = ShellPlacement.problems(of: spec).first {
            return "the command's argument \(problem.index): \(problem.message)"
        }
        // `{{input.FIELD}}` references: a field the input lacks fails the run before anything starts.
        var given: [String] = []
        for (index, argument) in spec.arguments.enumerated() {
            // Only the shell line is read by a shell; further arguments are its $1, $2… as they are.
            switch InputReferences.substitute(argument, index: index, input: value, quoted: spec.shell && index == 0) {
            case .success(let text): given.append(text)
            case .failure(let missing): return missing.message
            }
        }
        let path: String
        let arguments: [String]
        if spec.shell {
            path = "/bin/sh"
            arguments = ["/bin/sh", "-c", given[0], run.start.task.name] + given.dropFirst()
        } else {
            switch Self.resolve(given[0], path: environment["PATH"], directory: directory) {
            case .success(let found): path = found
            case .failure(let reason): return reason.message
            }
            arguments = given
        }
        run.program = path.hasPrefix("/") ? path : directory + "/" + path

        var input = run.start.inputBytes
        input.append(UInt8(ascii: "\n"))
        switch makeCgroup(for: run) {
        case .success(let cgroup): run.cgroup = cgroup
        case .failure(let failure): return failure.message
        }
        if let failure = spawn(run, path: path, arguments: arguments, environment: environment, directory: directory, input: input) {
            run.cgroup?.remove()
            run.cgroup = nil
            return failure
        }
        // Started: a large input is held as its text alone while the command runs.
        run.start.held.compact()
        return nil
    }

    /// The attempt's own cgroup, with the task's limits, in the agent's (nil without cgroups;
    /// limits then cannot be kept: the run fails).
    private func makeCgroup(for run: CommandRun) -> Result<RunCgroup?, RunCgroup.Failure> {
        let limits = run.start.task.limits
        guard let agent = containment?.agentCgroup else {
            guard limits == nil else {
                return .failure(RunCgroup.Failure(message: "cannot enforce the task's \"limits\": the agent runs without cgroups (it said why at its start); run it where cgroup v2 is writable (limits then use its controllers, else those of cgroup v1), or remove \"limits\" from the task"))
            }
            return .success(nil)
        }
        return RunCgroup.make(in: agent, v1: containment?.v1Limits, name: "run-\(run.runID)-\(run.start.attempt)", limits: limits).map { $0 }
    }

    private func spawn(_ run: CommandRun, path: String, arguments: [String], environment: [String: String],
                       directory: String, input: [UInt8]) -> String? {
        var stdin: [Int32] = [-1, -1]
        var stdout: [Int32] = [-1, -1]
        var stderr: [Int32] = [-1, -1]
        func closeAll() { for fd in stdin + stdout + stderr where fd >= 0 { Glibc.close(fd) } }
        guard agent_pipe_cloexec(&stdin) == 0, agent_pipe_cloexec(&stdout) == 0, agent_pipe_cloexec(&stderr) == 0 else {
            let code = errno
            closeAll()
            launchLacked = Self.lacks(code)
            return "cannot start \(run.program): no pipes for it (\(String(cString: strerror(code))))"
        }
        // The runner's ends only: the program's must block as a program expects.
        for fd in [stdin[1], stdout[0], stderr[0]] { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }

        // The input goes into the pipe before the program starts (a pipe holds 64 KiB); what
        // does not fit follows as the program reads.
        let written = input.withUnsafeBytes { write(stdin[1], $0.baseAddress, $0.count) }
        let pending = written < 0 ? 0 : written
        if pending == input.count {
            Glibc.close(stdin[1])
            stdin[1] = -1
        }

        let spawned = ProcessSpawner.spawn(
            path: path, arguments: arguments, environment: environment,
            stdin: stdin[0], stdout: stdout[1], stderr: stderr[1], channel: -1, directory: directory, newGroup: true,
            cgroup: run.cgroup?.fd ?? -1, joins: run.cgroup?.joins ?? [])
        Glibc.close(stdin[0])
        stdin[0] = -1
        Glibc.close(stdout[1])
        stdout[1] = -1
        Glibc.close(stderr[1])
        stderr[1] = -1
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(let error):
            closeAll()
            launchLacked = Self.lacks(error.errno)
            return Self.describe(error.errno, program: run.program)
        }
        if run.cgroup == nil { contain(pid) }
        run.pid = pid
        run.pidFD = agent_pidfd_open(pid)
        run.stdoutFD = stdout[0]
        run.stderrFD = stderr[0]
        run.stdinFD = stdin[1]
        if stdin[1] >= 0 {
            run.pendingInput = input
            run.inputOffset = pending
        }
        return nil
    }

    /// Without a cgroup of its own, a new command's group is written down for the next start to
    /// kill if this run of the agent does not stop cleanly.
    private func contain(_ pid: pid_t) {
        containment?.workerStarted(pid)
    }

    /// Kills the processes of `runIDs` that left their run's process group (a `setsid`
    /// daemon) when the runs have no cgroup of their own: those whose environment still
    /// carries the run's id, found in /proc (one that cleared its environment escapes).
    /// Returns their pids.
    /// `groups`: the runs' own process groups, killed as groups and reaped by their runs —
    /// a member still dying of that kill is not an escapee (reaping it here took the run's
    /// own exit status: "reaped elsewhere", no signal).
    package func killEscapees(of runIDs: Set<String>, outside groups: Set<pid_t>) -> [pid_t] {
        var killed: [pid_t] = []
        let prefix = Array("\(EnvironmentKey.runID)=".utf8)
        // A process may fork while the scan runs: look again while something was found.
        for _ in 0..<3 {
            var found = false
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = pid_t(entry), pid != getpid(), let stat = ProcStat.read(pid), stat.state != "Z",
                      !groups.contains(pid), !groups.contains(stat.group),
                      let environment = ProcFile.bytes("/proc/\(pid)/environ"),
                      let runID = Self.value(after: prefix, in: environment), runIDs.contains(runID) else { continue }
                Glibc.kill(pid, SIGKILL)
                if !killed.contains(pid) { killed.append(pid) }
                found = true
            }
            guard found else { break }
            usleep(5_000)
        }
        return killed
    }

    /// The value of the variable `prefix` (`NAME=`) in a /proc environ block.
    nonisolated private static func value(after prefix: [UInt8], in bytes: [UInt8]) -> String? {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0) ?? bytes.count
            if end - start >= prefix.count, bytes[start..<(start + prefix.count)].elementsEqual(prefix) {
                return String(decoding: bytes[(start + prefix.count)..<end], as: UTF8.self)
            }
            start = end + 1
        }
        return nil
    }

    // MARK: Finding the program

    package struct NotRunnable: Error {
        package var message: String
    }

    /// The program to spawn: a name with a `/` as it is (found from the working directory
    /// when relative), a bare name looked up in `path` (the command's PATH).
    nonisolated package static func resolve(_ name: String, path: String?, directory: String) -> Result<String, NotRunnable> {
        if name.contains("/") { return .success(name) }
        let search = path ?? "/usr/local/bin:/usr/bin:/bin"
        var notExecutable: String?
        for folder in search.split(separator: ":", omittingEmptySubsequences: false) {
            let base = folder.isEmpty ? "." : String(folder)
            var candidate = base + "/" + name
            if !candidate.hasPrefix("/") { candidate = directory + "/" + candidate }
            var info = stat()
            guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if access(candidate, X_OK) == 0 { return .success(candidate) }
            if notExecutable == nil { notExecutable = candidate }
        }
        if let notExecutable {
            return .failure(NotRunnable(message: "cannot run \(notExecutable): \(String(cString: strerror(EACCES))) (the program is not executable; chmod +x it)"))
        }
        return .failure(NotRunnable(message: "cannot run \(name): no such program in PATH (\(search)); give its full path"))
    }

    /// Why the spawn of `program` failed, in words that say what to fix.
    nonisolated package static func describe(_ code: Int32, program: String) -> String {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOENT: return "cannot run \(program): \(reason) (the program, or the interpreter its #! line names, does not exist)"
        case EACCES: return "cannot run \(program): \(reason) (the program is not executable, or a folder on its path cannot be entered)"
        case ENOEXEC: return "cannot run \(program): \(reason) (not a program this system runs; a script needs a #! line)"
        case EISDIR: return "cannot run \(program): \(reason)"
        default: return "cannot run \(program): \(reason)"
        }
    }
}
