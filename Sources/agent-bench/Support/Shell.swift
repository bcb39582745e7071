import Foundation

/// Runs the installers the bench needs (apt-get, python3 -m venv, pip).
enum Shell {
    /// Runs a command with its output appended to `log` (or on the bench's stderr); true when
    /// it exited 0.
    static func run(_ path: String, _ arguments: [String], environment extra: [String: String] = [:], log: String? = nil) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        var output = FileHandle.standardError
        if let log {
            if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
            if let handle = FileHandle(forWritingAtPath: log) {
                handle.seekToEndOfFile()
                output = handle
            }
        }
        process.standardOutput = output
        process.standardError = output
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
