import Foundation

/// What a program printed and how it ended.
struct ProgramResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program (a name in the build folder, or a path) to its end and collects its output.
func runProgram(_ program: String, _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:]) throws -> ProgramResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : TestPaths.products + "/" + program)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes at once, so that a program filling one of them cannot stall.
    let errors = LockedData()
    let reader = Thread { errors.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errors.isSet { usleep(1000) }
    return ProgramResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: errors.value, as: UTF8.self))
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}
