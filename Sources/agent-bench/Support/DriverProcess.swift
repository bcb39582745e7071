import Foundation

/// Runs a baseline's Python driver (APScheduler, Celery/RQ, procrastinate): its standard output
/// is the result, its standard error goes to `errorLog`, whose last 2,000 characters a failure
/// quotes.
enum DriverProcess {
    static func output(of process: Process, errorLog: String, name: String) throws -> Data {
        _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
        guard let errors = FileHandle(forWritingAtPath: errorLog) else { throw BenchError("cannot write \(errorLog)") }
        defer { try? errors.close() }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let tail = (try? String(contentsOfFile: errorLog, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
            throw BenchError("the \(name) driver exited with status \(process.terminationStatus): \(tail)")
        }
        return data
    }
}
