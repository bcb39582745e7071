import CAgentSystem
import Foundation

/// Runs a program (a name in the build folder) with its stdout and stderr on a pseudo-terminal,
/// as a person at a terminal sees it, and returns all it wrote there. Reading stops once
/// `until` holds for the output so far (the program then gets SIGTERM and its last lines are
/// read) or the program ends; after `timeout` seconds it is killed (SIGKILL).
package func runOnTerminal(_ program: String, _ arguments: [String], in directory: String, environment: [String: String] = [:],
                   timeout: Double = 120, until: (String) -> Bool = { _ in false }) throws -> String {
    try TestPaths.requireOutsideSourceTree(directory)
    var master: Int32 = -1, slave: Int32 = -1
    let opened = agent_open_pty(&master, &slave)
    guard opened == 0 else { throw TerminalFailure(description: "no pseudo-terminal: \(String(cString: strerror(opened)))") }
    defer { close(master) }
    let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: true)

    let process = TestProcess()
    process.executableURL = URL(fileURLWithPath: TestPaths.products + "/" + program)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var inherited = ProcessInfo.processInfo.environment
    // The test's own environment must not decide: colours unless the test says otherwise.
    inherited["NO_COLOR"] = nil
    inherited["TERM"] = "xterm-256color"
    process.environment = inherited.merging(environment) { _, new in new }
    process.standardOutput = terminal
    process.standardError = terminal
    process.standardInput = FileHandle.nullDevice
    try process.run()
    try terminal.close()

    var output = Data()
    var signalled = false
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 16 << 10)
    while Date() < deadline {
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, 100)
        if ready < 0, errno == EINTR { continue }
        if ready > 0 {
            let count = read(master, &buffer, buffer.count)
            // EIO: every end of the terminal on the program's side is closed.
            if count <= 0 { if count < 0, errno == EINTR { continue }; break }
            output.append(contentsOf: buffer[0..<count])
        } else if !process.isRunning {
            break
        }
        if !signalled, until(String(decoding: output, as: UTF8.self)) {
            signalled = true
            kill(process.processIdentifier, SIGTERM)
        }
    }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    ProcessDeadline.waitForExit(process, within: 60, "a program on a terminal")
    return String(decoding: output, as: UTF8.self)
}

package struct TerminalFailure: Error, CustomStringConvertible {
    package var description: String
}
