import AgentBase
import AgentTestSupport
import Foundation

/// `agent-control logs NAME -f --json` against a test's agent: what it prints on stdout (the
/// followed lines, decoded) and on stderr (why it failed or retried, for the test's messages).
final class LogFollower: @unchecked Sendable {
    private let process = TestProcess()
    private let stdout = LockedValue(Data())
    private let stderr = LockedValue(Data())

    init(_ agent: AgentRun, name: String, arguments: [String] = ["-n", "1"]) throws {
        process.executableURL = URL(fileURLWithPath: TestPaths.products + "/agent-control")
        process.arguments = ["logs", name, "-f", "--json"] + arguments + ["--settings", agent.settingsFile]
        process.currentDirectoryURL = URL(fileURLWithPath: agent.directory)
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        for (pipe, sink) in [(output, stdout), (errors, stderr)] {
            Thread {
                while case let data = pipe.fileHandleForReading.availableData, !data.isEmpty { sink.withLock { $0.append(data) } }
            }.start()
        }
    }

    deinit { stop() }

    var isRunning: Bool { process.isRunning }

    /// What it wrote on stderr so far.
    var errors: String { String(decoding: stderr.withLock { $0 }, as: UTF8.self) }

    /// The lines it printed so far, decoded.
    var lines: [[String: Any]] {
        String(decoding: stdout.withLock { $0 }, as: UTF8.self).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (60 s at most) until `done` holds for the printed lines or the follower ended;
    /// true when it holds.
    @discardableResult
    func wait(until done: ([[String: Any]]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !done(lines), process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return done(lines)
    }

    /// Waits (60 s at most) until its stderr holds `text`.
    @discardableResult
    func waitForError(containing text: String) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !errors.contains(text), process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return errors.contains(text)
    }

    /// Interrupts it (SIGKILL: the test runner may hand its children SIGINT blocked); what it
    /// printed was flushed after each answer.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        ProcessDeadline.waitForExit(process, within: 60, "the log follower")
    }

    /// How it stands, for a test's message.
    var description: String { "follower \(process.isRunning ? "running" : "exited \(process.terminationStatus)"); stderr: \(errors)" }
}
