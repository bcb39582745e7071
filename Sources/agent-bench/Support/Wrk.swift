import Foundation

/// Debian's wrk (4.1), found on the PATH or installed with apt-get at run time (nothing of it
/// is in the repository), and run with `--latency`.
struct Wrk {
    let path: String
    /// `wrk -v`'s first line.
    let version: String

    /// How each run loads the server: keep-alive connections shared by the threads.
    struct Load {
        var threads = 2
        var connections = 32
        var seconds = 10

        var arguments: [String] { ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency"] }
        var summary: String { "wrk -t\(threads) -c\(connections) -d\(seconds)s --latency" }
    }

    /// wrk from the PATH; when absent and the bench runs as root, `apt-get install -y wrk`
    /// (after `apt-get update` if the first attempt fails).
    static func locate() throws -> Wrk {
        if let found = which("wrk") { return Wrk(path: found, version: versionLine(of: found)) }
        guard getuid() == 0 else {
            throw BenchError("wrk is not installed and the bench is not root: install Debian's package (`apt-get install wrk`)")
        }
        Progress.say("installing Debian's wrk (apt-get install -y wrk)…")
        let environment = ["DEBIAN_FRONTEND": "noninteractive"]
        if !Shell.run("/usr/bin/env", ["apt-get", "install", "-y", "-q", "wrk"], environment: environment) {
            _ = Shell.run("/usr/bin/env", ["apt-get", "update", "-q"], environment: environment)
            _ = Shell.run("/usr/bin/env", ["apt-get", "install", "-y", "-q", "wrk"], environment: environment)
        }
        guard let found = which("wrk") else { throw BenchError("apt-get install wrk did not install wrk") }
        return Wrk(path: found, version: versionLine(of: found))
    }

    /// Runs wrk against `url` (with the Lua `script` if any) and reads its output.
    func run(_ url: String, load: Load, script: String? = nil) throws -> WrkOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = load.arguments + (script.map { ["-s", $0] } ?? []) + [url]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw BenchError("wrk exited with status \(process.terminationStatus): \(errorText.isEmpty ? text : errorText)")
        }
        return try WrkOutput(parsing: text)
    }

    private static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") + ["/usr/bin"] {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// wrk -v prints its version and usage on stdout and exits 1.
    private static func versionLine(of path: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-v"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        guard (try? process.run()) != nil else { return "wrk" }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").first.map { $0.components(separatedBy: " Copyright").first ?? String($0) } ?? "wrk"
    }
}
