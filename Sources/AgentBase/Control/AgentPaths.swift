import AgentCore
import Foundation

/// Where a running agent keeps its pidfile, control socket and log.
///
/// Defaults live under the agent's folder: `.agent/run/agent.pid`, `.agent/run/control.sock`,
/// `.agent/log/agent.log`. `AGENT_RUN_DIR`, `AGENT_PIDFILE` and `AGENT_LOG_FILE` (or the
/// matching options) override them.
public struct AgentPaths: Sendable, Equatable {
    public var runDirectory: String
    public var pidfile: String
    public var logFile: String
    public var socketName = "control.sock"

    public var socketPath: String { runDirectory + "/" + socketName }

    public init(agentDirectory: String, runDirectory: String? = nil, pidfile: String? = nil, logFile: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        let run = runDirectory ?? environment["AGENT_RUN_DIR"] ?? agentDirectory + "/.agent/run"
        self.runDirectory = Self.absolute(run)
        self.pidfile = Self.absolute(pidfile ?? environment["AGENT_PIDFILE"] ?? self.runDirectory + "/agent.pid")
        self.logFile = Self.absolute(logFile ?? environment["AGENT_LOG_FILE"] ?? agentDirectory + "/.agent/log/agent.log")
    }

    package static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path
    }

    /// Creates the run directory, the log file's and the pidfile's folders (and the folders
    /// above them that are missing), each 0700 whatever the umask. Returns whether it created
    /// the run directory.
    @discardableResult
    public func createDirectories() throws -> Bool {
        let created = try PrivateFiles.makeDirectories(runDirectory).contains(runDirectory)
        try PrivateFiles.makeDirectories(URL(fileURLWithPath: logFile).deletingLastPathComponent().path)
        try PrivateFiles.makeDirectories(URL(fileURLWithPath: pidfile).deletingLastPathComponent().path)
        return created
    }
}
