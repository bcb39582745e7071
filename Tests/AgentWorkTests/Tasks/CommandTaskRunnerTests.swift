import AgentCore
@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The built-in `command` task type, driven directly on a loop of the test's own: real
/// programs, real pipes, real process trees.
@Suite(.ownThreads) struct CommandTaskRunnerTests {
    typealias Harness = CommandRunnerHarness

    // MARK: Exit status

    @Test func aProgramThatExitsZeroSucceedsWithNoOutput() throws {
        let harness = Harness("true")
        let outcome = try #require(harness.run(Harness.task(["/bin/true"])))
        #expect(outcome.status == .succeeded)
        #expect(outcome.exitCode == 0)
        #expect(outcome.output == nil)
        #expect(outcome.error == nil)
        #expect(outcome.stderrTail == nil)
    }

    @Test func aProgramThatExitsNonZeroFailsSayingItsStatus() throws {
        let harness = Harness("false")
        let outcome = try #require(harness.run(Harness.task(["/bin/false"])))
        #expect(outcome.status == .failed)
        #expect(outcome.exitCode == 1)
        #expect(outcome.error == "exited with status 1")
    }

    @Test func stderrIsKeptAndItsLastLineNamedInTheError() throws {
        let harness = Harness("stderr")
        let outcome = try #require(harness.run(Harness.task(["echo first >&2; echo oops >&2; exit 3"], shell: true)))
        #expect(outcome.status == .failed)
        #expect(outcome.exitCode == 3)
        #expect(outcome.stderrTail == "first\noops")
        #expect(outcome.error == "exited with status 3; last line of stderr: oops")
    }

    @Test func aProgramKilledByASignalFailsNamingTheSignal() throws {
        let harness = Harness("signal")
        let outcome = try #require(harness.run(Harness.task(["kill -KILL $$"], shell: true)))
        #expect(outcome.status == .failed)
        #expect(outcome.signal == "SIGKILL")
        #expect(outcome.exitCode == nil)
        #expect(outcome.error == "killed by SIGKILL")
    }

    // MARK: Output and input

    @Test func jsonOnStdoutBecomesTheOutputAsJSON() throws {
        let harness = Harness("json")
        let outcome = try #require(harness.run(Harness.task([#"printf '{"rows": 3, "ok": true}\n'"#], shell: true)))
        #expect(outcome.status == .succeeded)
        #expect(outcome.output == ["rows": 3, "ok": true])
    }

    @Test func textOnStdoutBecomesTheOutputWithoutItsTrailingNewline() throws {
        let harness = Harness("text")
        let outcome = try #require(harness.run(Harness.task(["/bin/echo", "hello", "world"])))
        #expect(outcome.output == .string("hello world"))
    }

    @Test func theInputArrivesAsJSONOnStdinFollowedByItsEnd() throws {
        let harness = Harness("cat")
        let input: JSONValue = ["name": "Ada", "values": [1, 2.5, "x"], "nested": ["ok": false]]
        let outcome = try #require(harness.run(Harness.task(["/bin/cat"]), input: input))
        #expect(outcome.status == .succeeded)
        #expect(outcome.output == input)
    }

    @Test func anInputLargerThanAPipeReachesTheProgramWhole() throws {
        let harness = Harness("big-input")
        let input = JSONValue.array((0..<40_000).map { .string("item \($0)") })
        let outcome = try #require(harness.run(Harness.task(["/bin/cat"]), input: input))
        #expect(outcome.status == .succeeded)
        #expect(outcome.output == input)
    }

    @Test func stdoutBeyondItsBoundIsCutAndTheOutputSaysSo() throws {
        var limits = CommandTaskRunner.Limits()
        limits.stdoutBytes = 1_000
        let harness = Harness("truncated", limits: limits)
        let outcome = try #require(harness.run(Harness.task(["head -c 5000 /dev/zero | tr '\\0' a"], shell: true)))
        #expect(outcome.status == .succeeded)
        guard case .string(let text) = outcome.output else {
            Issue.record("output \(String(describing: outcome.output))")
            return
        }
        #expect(text.hasPrefix(String(repeating: "a", count: 1_000) + "\n"))
        #expect(text.hasSuffix("[output truncated: the first 1000 bytes of 5000 bytes kept]"))
    }

    @Test func aFloodOnStdoutNeitherBlocksTheProgramNorGrowsWithoutBound() throws {
        let harness = Harness("flood")
        // 8 MiB: far beyond the pipe and the 1 MiB kept.
        let outcome = try #require(harness.run(Harness.task(["head -c 8388608 /dev/zero; echo done >&2"], shell: true)))
        #expect(outcome.status == .succeeded)
        #expect(outcome.stderrTail == "done")
        guard case .string(let text) = outcome.output else {
            Issue.record("output \(String(describing: outcome.output))")
            return
        }
        // NULs are U+FFFD, three bytes each: the text is held to the bound too, and says so.
        let bounded = text.utf8.count < (1 << 20) + 300
        #expect(bounded, "\(text.utf8.count) bytes")
        let said = text.hasSuffix("[output truncated: the first 1 MiB of 8 MiB kept, and of their text the first 1048575 bytes (NUL and invalid UTF-8 are U+FFFD, three bytes each)]")
        #expect(said, "\(text.suffix(200))")
    }

    @Test func aLargeJSONOutputIsMadeOffTheLoopAndReportedWhole() throws {
        let harness = Harness("large-json")
        // The thread that makes large outputs is held: the run is seen waiting for it.
        let hold = Harness.TextMakingHold()
        // ~190 KB of JSON: beyond what the loop makes into the output itself.
        let script = "printf '['; seq -f '{\"n\": %g, \"s\": \"xxxxxxxxxx\"},' 1 7999; printf '{\"n\": 8000}]'; head -c 70000 /dev/zero >&2; echo ' last' >&2; exit 3"
        let runID = harness.startWaitingForTexts(Harness.task([script], shell: true))
        #expect(harness.onLoop { harness.runner.runs[runID]?.exitStatus } == 3 << 8, "ended, its texts being made elsewhere")
        #expect(harness.outcomes[runID] == nil)
        hold.release()
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .failed)
        guard case .array(let items) = outcome.output else {
            Issue.record("output \(String(describing: outcome.output).prefix(200))")
            return
        }
        #expect(items.count == 8_000)
        #expect(items.last == ["n": 8000])
        #expect(outcome.error == "exited with status 3; last line of stderr: \(String(repeating: "\u{FFFD}", count: 300))", "\(outcome.error ?? "")")
        #expect(outcome.stderrTail?.utf8.contains(0) == false)
    }

    @Test func theAgentsStopReportsARunWhoseLargeOutputIsStillBeingMadeOnceAndWhole() throws {
        let harness = Harness("large-stop")
        // The thread that makes large outputs is held, so that the run waits for it at the stop.
        let hold = Harness.TextMakingHold()
        let runID = harness.startWaitingForTexts(Harness.task(["head -c 200000 /dev/zero | tr '\\0' a"], shell: true))
        #expect(harness.onLoop { harness.runner.runs[runID]?.exitStatus } == 0, "ended, its texts being made elsewhere")
        #expect(harness.outcomes[runID] == nil, "reported only once its output is made")
        harness.onLoop { harness.runner.shutDown() }
        let outcome = try #require(harness.outcomes[runID], "the stop made it and reported the run")
        #expect(outcome.status == .succeeded)
        #expect(outcome.output == .string(String(repeating: "a", count: 200_000)))
        hold.release()
        // What the thread makes afterwards finds the run reported: not a second report.
        #expect(harness.passTextMaking())
        #expect(harness.finishCounts[runID] == 1)
    }

    @Test func aLargeInputHeldAsTextIsReadOffTheLoopAndReachesTheCommandWhole() throws {
        let harness = Harness("large-input")
        let input: JSONValue = ["file": "name.txt", "blob": .string(String(repeating: "x", count: 40_000))]
        let task = Harness.task(["printf '%s|' \"$INPUT_FILE\" {{input.file}}; wc -c"], shell: true)
        let runID = harness.start(task, input: input, heldAsText: true)
        #expect(harness.onLoop { harness.runner.inputReading[runID] != nil }, "read on the runner's thread, not on the loop")
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .succeeded, "\(outcome.error ?? "")")
        #expect(outcome.output == .string("name.txt|name.txt|\(input.serializedBytes().count + 1)"))
    }

    @Test func aCancelWhileTheInputIsReadEndsTheRunBeforeItsCommandStarts() throws {
        let harness = Harness("large-input-cancel")
        let input: JSONValue = ["blob": .string(String(repeating: "x", count: 40_000))]
        let marker = harness.directory + "/started"
        let runID = harness.start(Harness.task(["touch \(marker)"], shell: true), input: input, heldAsText: true)
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .cancelled) }
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .cancelled)
        #expect(outcome.error?.contains("before its command started") == true, "\(outcome.error ?? "")")
        // The value read afterwards finds the run ended: nothing is started, nothing reported again.
        #expect(harness.passTextMaking())
        #expect(harness.finishCounts[runID] == 1)
        #expect(harness.onLoop { harness.runner.runs[runID] == nil })
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func theStderrTailKeepsTheLastLinesOnly() throws {
        var limits = CommandTaskRunner.Limits()
        limits.stderrLines = 3
        limits.stderrBytes = 4_096
        let harness = Harness("tail", limits: limits)
        let outcome = try #require(harness.run(Harness.task(["seq 1 100000 >&2; exit 2"], shell: true)))
        #expect(outcome.stderrTail == "[earlier lines left out]\n99998\n99999\n100000")
        #expect(outcome.error == "exited with status 2; last line of stderr: 100000")
    }

    // MARK: Environment and folder

    @Test func theEnvironmentCarriesTheRuntimesTheTasksAndTheRunsVariables() throws {
        let harness = Harness("env", environment: ["PATH": "/usr/bin:/bin", "FROM_RUNTIME": "r", "OVERRIDDEN": "runtime"])
        let task = Harness.task([#"printf '%s|%s|%s|%s|%s|%s' "$FROM_RUNTIME" "$OVERRIDDEN" "$FROM_TASK" "$AGENT_TASK_RUN_ID" "$AGENT_TASK_ATTEMPT" "$AGENT_TASK_NAME""#],
                                name: "nightly", shell: true, environment: ["FROM_TASK": "t", "OVERRIDDEN": "task"])
        let runID = harness.start(task, runID: "run-42", attempt: 3)
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.output == .string("r|task|t|run-42|3|nightly"))
    }

    @Test func extraArgumentsOfAShellLineAreItsPositionalParameters() throws {
        let harness = Harness("shell-args")
        let outcome = try #require(harness.run(Harness.task([#"printf '%s+%s' "$1" "$2""#, "one", "two words"], shell: true)))
        #expect(outcome.output == .string("one+two words"))
    }

    @Test func aCommandRunsInTheAgentsFolderUnlessItsTaskNamesAnother() throws {
        let harness = Harness("cwd")
        let real = URL(fileURLWithPath: harness.directory).resolvingSymlinksInPath().path
        #expect(harness.run(Harness.task(["/bin/pwd", "-P"]))?.output == .string(real))
        try FileManager.default.createDirectory(atPath: harness.directory + "/jobs", withIntermediateDirectories: true)
        #expect(harness.run(Harness.task(["/bin/pwd", "-P"], directory: "jobs"))?.output == .string(real + "/jobs"))
        #expect(harness.run(Harness.task(["/bin/pwd", "-P"], directory: "/"))?.output == .string("/"))
    }

    @Test func aProgramNamedWithoutAFolderIsFoundInPATH() throws {
        let harness = Harness("path")
        let outcome = try #require(harness.run(Harness.task(["echo", "found"])))
        #expect(outcome.output == .string("found"))
    }

    // MARK: Programs that cannot run

    @Test func aProgramThatDoesNotExistFailsSayingSo() throws {
        let harness = Harness("missing")
        let outcome = try #require(harness.run(Harness.task(["/no/such/program", "x"])))
        #expect(outcome.status == .failed)
        #expect(outcome.exitCode == nil)
        #expect(outcome.error == "cannot run /no/such/program: No such file or directory (the program, or the interpreter its #! line names, does not exist)")
        let bare = try #require(harness.run(Harness.task(["no-such-program-anywhere"])))
        #expect(bare.status == .failed)
        #expect(bare.error == "cannot run no-such-program-anywhere: no such program in PATH (/usr/local/bin:/usr/bin:/bin); give its full path")
    }

    @Test func aFileThatIsNotExecutableFailsSayingSo() throws {
        let harness = Harness("not-executable")
        let script = harness.directory + "/job.sh"
        try "#!/bin/sh\necho hi\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let outcome = try #require(harness.run(Harness.task([script])))
        #expect(outcome.status == .failed)
        #expect(outcome.error == "cannot run \(script): Permission denied (the program is not executable, or a folder on its path cannot be entered)")
        // Relative: found from the working folder.
        let relative = try #require(harness.run(Harness.task(["./job.sh"])))
        #expect(relative.error == "cannot run \(harness.directory)/./job.sh: Permission denied (the program is not executable, or a folder on its path cannot be entered)")
    }

    @Test func aWorkingFolderThatDoesNotExistFailsTheRunSayingSo() throws {
        let harness = Harness("no-folder")
        let outcome = try #require(harness.run(Harness.task(["/bin/true"], directory: "/no/such/folder")))
        #expect(outcome.status == .failed)
        #expect(outcome.error == "cannot run the command in /no/such/folder: No such file or directory (the task's \"cwd\")")
    }

    @Test func aTaskWithoutACommandFailsSayingSo() throws {
        let harness = Harness("empty")
        let outcome = try #require(harness.run(TaskDefinition(name: "job", type: "command")))
        #expect(outcome.status == .failed)
        #expect(outcome.error?.hasPrefix("the task has no command to run") == true)
    }

    // MARK: Ending runs early

    @Test func aTimeoutKillsTheWholeTreeAndNothingSurvives() throws {
        let harness = Harness("timeout")
        let runID = harness.start(Harness.task(["sleep 100 & sleep 100"], shell: true, timeout: 5))
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        #expect(pid > 0)
        let tree = Harness.waitForGroup(pid, count: 2, command: "sleep")
        #expect(tree.filter { ProcFacts.command($0) == "sleep" }.count == 2, "\(tree)")
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .timedOut) }
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .timedOut)
        #expect(outcome.error == "timed out: killed (with everything it started) after its timeout of 5 s")
        #expect(outcome.signal == "SIGKILL")
        #expect(ProcFacts.survivors(of: tree, within: 5).isEmpty)
        #expect(harness.finishCounts[runID] == 1)
    }

    @Test func aCancelEndsTheRunAsCancelledWithSIGTERM() throws {
        let harness = Harness("cancel")
        let runID = harness.start(Harness.task(["trap 'echo terminated >&2; exit 143' TERM; sleep 100 & wait"], shell: true))
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        let tree = Harness.waitForGroup(pid, count: 1, command: "sleep")
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .cancelled) }
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .cancelled)
        #expect(outcome.error == "cancelled: ended (with everything it started) at a user's request")
        #expect(outcome.stderrTail == "terminated")
        #expect(ProcFacts.survivors(of: tree, within: 5).isEmpty)
    }

    /// A program of the run's own group still dying of the group's SIGKILL is no escapee: the
    /// escapee sweep once reaped it and took the run's exit status ("reaped elsewhere", no
    /// signal; seen in a loaded full run).
    @Test func theEscapeeSweepLeavesTheRunsOwnGroupToItsRun() throws {
        let harness = Harness("escapees")
        let runID = harness.start(Harness.task(["sleep", "30"]))
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        _ = Harness.waitForGroup(pid, count: 1, command: "sleep")
        #expect(harness.onLoop { harness.runner.killEscapees(of: [runID], outside: [pid]) }.isEmpty)
        #expect(ProcFacts.isAlive(pid))
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .cancelled) }
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .cancelled)
        #expect(outcome.signal == "SIGTERM")
    }

    @Test func aCancelledProgramThatIgnoresSIGTERMIsKilledAfterTheGrace() throws {
        var limits = CommandTaskRunner.Limits()
        limits.cancelGrace = 0.3
        let harness = Harness("grace", limits: limits)
        let runID = harness.start(Harness.task(["trap '' TERM; echo ready; exec sleep 100"], shell: true))
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        _ = Harness.waitForGroup(pid, count: 1, command: "sleep")
        let began = EventLoop.now()
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .cancelled) }
        let outcome = try #require(harness.wait(for: runID))
        #expect(outcome.status == .cancelled)
        #expect(outcome.signal == "SIGKILL")
        #expect(EventLoop.now() - began >= 0.3)
        #expect(!ProcFacts.isAlive(pid))
    }

    @Test func shutDownInterruptsEveryRunningCommandAndKillsIt() throws {
        let harness = Harness("shutdown")
        let first = harness.start(Harness.task(["/bin/sleep", "100"]))
        let second = harness.start(Harness.task(["sleep 100 & sleep 100"], shell: true))
        harness.turn(for: 0.01)
        let pids = [harness.pid(of: first)] + Harness.waitForGroup(harness.pid(of: second), count: 2, command: "sleep")
        harness.onLoop { harness.runner.shutDown() }
        #expect(harness.outcomes[first]?.status == .interrupted)
        #expect(harness.outcomes[second]?.status == .interrupted)
        #expect(ProcFacts.survivors(of: pids, within: 5).isEmpty)
        // Nothing starts after the stop.
        let late = try #require(harness.run(Harness.task(["/bin/true"])))
        #expect(late.status == .failed)
        #expect(late.error == "the agent is stopping; the command was not started")
    }

    @Test func whatAProgramLeavesRunningDiesWithIt() throws {
        let harness = Harness("leftover")
        let outcome = try #require(harness.run(Harness.task(["sleep 100 > /dev/null 2>&1 & echo $!"], shell: true)))
        guard case .number(let number) = outcome.output, let pid = Int32(number.description) else {
            Issue.record("output \(String(describing: outcome.output))")
            return
        }
        #expect(outcome.status == .succeeded)
        #expect(ProcFacts.survivors(of: [pid], within: 5).isEmpty)
    }

    // MARK: Descriptors and containment

    @Test func aRunningCommandHoldsNoDescriptorOfAnotherRun() throws {
        let harness = Harness("fds")
        let first = harness.start(Harness.task(["/bin/sleep", "100"]))
        let second = harness.start(Harness.task(["/bin/sleep", "100"]))
        harness.turn(for: 0.01)
        defer { harness.onLoop { harness.runner.shutDown() } }
        for runID in [first, second] {
            let pid = harness.pid(of: runID)
            ProcFacts.waitForCommand("sleep", of: [pid])
            // The command's name changes at exec, before the dynamic loader has read the libraries
            // (on fd 3, for a moment): wait for sleep's own descriptors; one that leaked stays.
            let descriptors = { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).sorted() }
            let deadline = Date().addingTimeInterval(30)
            while descriptors() != ["0", "1", "2"], Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            let fds = descriptors()
            #expect(fds == ["0", "1", "2"], "pid \(pid) holds \(fds)")
        }
        // And none of the runner's ends of one run's pipes is what the other holds.
        let firstFDs = try #require(harness.onLoop { harness.runner.runs[first]?.fds })
        let secondPid = harness.pid(of: second)
        let ends = Set(firstFDs.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
        let held = Set((0...2).compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(secondPid)/fd/\($0)") })
        #expect(ends.isDisjoint(with: held), "\(ends) / \(held)")
        #expect(firstFDs.allSatisfy { fcntl($0, F_GETFD) & FD_CLOEXEC != 0 })
    }

    @Test func aCommandRunsInsideTheAgentsContainment() throws {
        let runDirectory = TestPaths.temporaryDirectory("command-containment")
        defer { try? FileManager.default.removeItem(atPath: runDirectory) }
        let containment = try WorkerContainment.prepare(runDirectory: runDirectory, logger: Logger(label: "test"))
        defer { containment.finish() }
        let harness = Harness("containment", containment: containment)
        let runID = harness.start(Harness.task(["/bin/sleep", "100"]))
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        #expect(pid > 0)
        if let cgroup = containment.cgroup {
            let own = try String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)
            // Its run's own cgroup, in the agent's.
            let runCgroup = cgroup + "/" + RunCgroup.safe("run-\(runID)-1")
            #expect(own.split(separator: "\n").contains { $0.hasPrefix("0::") && runCgroup.hasSuffix($0.dropFirst(3)) }, "\(own) / \(runCgroup)")
        } else {
            let record = try String(contentsOfFile: runDirectory + "/workers", encoding: .utf8)
            #expect(record.contains("group \(pid) "), "\(record)")
        }
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .timedOut) }
        #expect(harness.wait(for: runID)?.status == .timedOut)
    }

    @Test func aProcessThatLeftTheGroupIsKilledAtATimeoutToo() throws {
        let harness = Harness("escapee")
        let runID = harness.start(Harness.task(["setsid sleep 101 > /dev/null 2>&1 & echo started; exec sleep 100"], shell: true))
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        // The escapee: a child of the command in a session (and group) of its own.
        var escapee: pid_t = 0
        let deadline = Date().addingTimeInterval(10)
        while escapee == 0, Date() < deadline {
            escapee = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }.first { candidate in
                guard let stat = ProcStat.read(candidate) else { return false }
                return stat.parent == pid && stat.group != pid && ProcFacts.command(candidate) == "sleep"
            } ?? 0
            if escapee == 0 { Thread.sleep(forTimeInterval: 0.01) }
        }
        try #require(escapee > 0)
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .timedOut) }
        #expect(harness.wait(for: runID)?.status == .timedOut)
        #expect(ProcFacts.survivors(of: [pid, escapee], within: 5).isEmpty)
    }

    @Test func aCommandTasksCancelGraceIsItsTimeFromSIGTERMToSIGKILL() throws {
        // The runner's own default is far longer: the task's grace is what ends the run.
        var limits = CommandTaskRunner.Limits()
        limits.cancelGrace = 60
        let harness = CommandRunnerHarness("task-grace", limits: limits)
        var task = CommandRunnerHarness.task(["trap '' TERM; echo ready; exec sleep 100"], shell: true)
        task.cancelGrace = 0.2
        let runID = harness.start(task)
        harness.turn(for: 0.01)
        let pid = harness.pid(of: runID)
        _ = CommandRunnerHarness.waitForGroup(pid, count: 1, command: "sleep")
        harness.onLoop { harness.runner.cancel(runID: runID, reason: .cancelled) }
        let outcome = try #require(harness.wait(for: runID, timeout: 30))
        #expect(outcome.status == .cancelled)
        #expect(outcome.signal == "SIGKILL")
        #expect(!ProcFacts.isAlive(pid))
    }

}
