import AgentTestSupport
import Foundation
import Testing

/// agent-control links the Swift runtime statically, whose crash backtracer would look for its
/// helper (`swift-backtrace`) relative to argv[0]: run through PATH, from the working folder.
/// It is named by an absolute path instead (Sources/CAgentControl/backtrace_helper.c).
@Suite(.ownThreads, .serialized) struct CrashReportTests {
    static let oneProcess = #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.05}}}"#

    @Test func aCrashedSupervisorRunThroughPathPrintsItsBacktraceAndRunsNothingFromItsWorkingFolder() throws {
        let directory = TestPaths.temporaryDirectory("crash-report")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Where a search relative to a bare argv[0] looks: the working folder and its bin/.
        let marker = directory + "/helper-ran"
        let impostor = "#!/bin/sh\necho ran > '\(marker)'\n"
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true)
        for path in [directory + "/swift-backtrace", directory + "/bin/swift-backtrace"] {
            try impostor.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
        // argv[0] is the bare name, found through PATH, as from a shell or the package's /usr/bin.
        let run = try AgentRun(settings: Self.oneProcess, environment: ["PATH": TestPaths.products + ":/usr/bin:/bin"], directory: directory,
                               shell: "unset SWIFT_BACKTRACE; exec agent-control \"$@\"")
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        #expect(run.waitForLine(onStderr: true, timeout: 120) { $0.contains("ready in") } != nil, "\(run.transcript)")

        // What agent-control set for its own runtime is not passed on: workers get theirs from
        // the supervisor's environment, off unless the agent's environment sets it.
        let pid = run.process.processIdentifier
        let workers = run.workerPids("trades")
        #expect(!workers.isEmpty)
        for worker in workers {
            let environment = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(worker)/environ")), as: UTF8.self)
            let values = environment.split(separator: "\0").map(String.init).filter { $0.hasPrefix("SWIFT_BACKTRACE=") }
            #expect(values == ["SWIFT_BACKTRACE=enable=no"], "\(values)")
        }

        kill(pid, SIGSEGV)
        // The toolchain's helper symbolicates a large binary: give it a slow machine's time. (A
        // SIGSEGV sent from outside is no fault: the backtracer lets the process go on after it.)
        #expect(run.waitForLine(onStderr: true, timeout: 180) { $0.contains("Backtrace took") } != nil, "no backtrace\n\(run.transcript)")
        #expect(run.transcript.contains("Program crashed"), "\(run.transcript)")
        #expect(run.transcript.contains("EventLoop"), "the backtrace names no frame of the supervisor\n\(run.transcript)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a swift-backtrace of the working folder ran")
    }

    @Test func aCommandKeepsItsArgumentsAndABacktraceSettingIsPassedOnAsGiven() throws {
        // The runtime's command line is handed over before the environment is changed (the
        // runtime finds it by walking back from environ): a command still parses its arguments.
        let version = try runProgram("agent-control", ["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("agent-control "), "\(version.stdout)\(version.stderr)")
        // A setting without a helper gets one for agent-control's own runtime only; the
        // supervisor's environment, which its workers and commands get, keeps it as given.
        let given = "enable=yes,interactive=no"
        let run = try AgentRun(settings: Self.oneProcess, environment: ["SWIFT_BACKTRACE": given])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        #expect(run.waitForLine(onStderr: true, timeout: 120) { $0.contains("ready in") } != nil, "\(run.transcript)")
        // (/proc/PID/environ shows what a process was started with, not its `environ` now: a
        // worker's shows what the supervisor passed on.)
        let workers = run.workerPids("trades")
        #expect(!workers.isEmpty, "\(run.transcript)")
        for worker in workers {
            let environment = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(worker)/environ")), as: UTF8.self)
            let values = environment.split(separator: "\0").map(String.init).filter { $0.hasPrefix("SWIFT_BACKTRACE=") }
            #expect(values == ["SWIFT_BACKTRACE=" + given], "\(values)")
        }
        #expect(run.stop() == 0, "\(run.transcript)")
    }
}
