import Foundation

/// What a program printed and how it ended.
package struct ProgramResult {
    package var status: Int32
    package var stdout: String
    package var stderr: String
}

/// Runs a program (a name in the build folder, or a path) to its end and collects its output.
/// It runs in `directory`, or in a new temporary folder: never in the source tree (nor on a
/// settings file or `-C` folder there), so that a test cannot write into it.
/// `input` is written to its stdin (else it reads nothing); after `timeout` seconds it is
/// killed (SIGKILL), so that a program that blocks cannot hang the tests.
package func runProgram(_ program: String, _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:],
                input: Data? = nil, timeout: Double = 300) throws -> ProgramResult {
    let workingDirectory = directory ?? TestPaths.temporaryDirectory("cwd")
    try TestPaths.requireOutsideSourceTree(workingDirectory)
    for (index, argument) in arguments.enumerated().dropLast() where ["--settings", "-C"].contains(argument) {
        let path = arguments[index + 1]
        try TestPaths.requireOutsideSourceTree(path.hasPrefix("/") ? path : workingDirectory + "/" + path)
    }
    let process = TestProcess()
    process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : TestPaths.products + "/" + program)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    // The input from a file, not a pipe: a process another test spawns at the same moment can
    // inherit a pipe's write end, and the program then waits for its end until it is killed
    // (curl, whose --max-time counts only the transfer, was: seen once in a full run).
    var inputFile: String?
    if let input {
        let folder = TestPaths.temporaryDirectory("stdin")
        try input.write(to: URL(fileURLWithPath: folder + "/input"))
        inputFile = folder
        process.standardInput = FileHandle(forReadingAtPath: folder + "/input")
    } else {
        process.standardInput = FileHandle.nullDevice
    }
    defer { if let inputFile { try? FileManager.default.removeItem(atPath: inputFile) } }
    try process.run()
    let pid = process.processIdentifier
    let finished = LockedData()
    Thread {
        let deadline = Date().addingTimeInterval(timeout)
        while !finished.isSet, Date() < deadline { usleep(10_000) }
        if !finished.isSet { kill(pid, SIGKILL) }
    }.start()
    defer { finished.set(Data()) }
    // Read both pipes at once, so that a program filling one of them cannot stall.
    let errors = LockedData()
    let reader = Thread { errors.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    // A bounded wait, not waitUntilExit: past the kill and a minute more, a diagnostic. A
    // zombie's exit code (the kernel's word) is taken as soon as it is there.
    let exitDeadline = Date().addingTimeInterval(timeout + 60)
    var zombie: Int32?
    while process.isRunning, zombie == nil {
        zombie = AgentRun.exitStatusOfZombie(pid)
        guard Date() < exitDeadline else {
            throw ProgramRunError(description: "\(program) \(arguments.joined(separator: " ")) did not end \(Int(timeout + 60)) s after it began, "
                                  + "though killed after \(Int(timeout)) s:\n\(AgentRun.stuckReport(pid, "did not end"))")
        }
        if zombie == nil { usleep(5_000) }
    }
    let errorsDeadline = Date().addingTimeInterval(60)
    while !errors.isSet, Date() < errorsDeadline { usleep(1000) }
    return ProgramResult(status: zombie ?? process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: errors.value, as: UTF8.self))
}

/// A program that did not end though killed.
package struct ProgramRunError: Error, CustomStringConvertible {
    package var description: String
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}
