import AgentCore
import Foundation

/// The modes in which the bench re-executes itself, so that a measurement runs in a fresh
/// process (module loading) or in further processes (the socketpair baselines).
enum ChildMode {
    static let flag = "--child"

    /// Runs the child mode named in `arguments` (after ``flag``) and exits; returns if the
    /// arguments are not a child invocation.
    static func runIfRequested(_ arguments: [String]) {
        guard arguments.count >= 3, arguments[1] == flag else { return }
        let rest = Array(arguments.dropFirst(3))
        switch arguments[2] {
        case "load" where rest.count == 2:
            exit(loadModule(path: rest[0], name: rest[1], deferManifest: false))
        case "load" where rest.count == 3 && rest[2] == "deferred":
            exit(loadModule(path: rest[0], name: rest[1], deferManifest: true))
        case "socket-sink":
            exit(SocketSink.run(fd: 3))
        case "socket-relay":
            // The bench hands the relay its socket to the receiver as stdin.
            exit(SocketRelay.run(from: 3, to: 0))
        default:
            FileHandle.standardError.write(Data("agent-bench: unknown child mode \(arguments.dropFirst(2).joined(separator: " "))\n".utf8))
            exit(64)
        }
    }

    /// Loads one module library in this fresh process and prints how long
    /// `ModuleLoader.load` took (file checks, dlopen, ABI check, manifest decoding);
    /// `deferManifest` as a worker loads it.
    private static func loadModule(path: String, name: String, deferManifest: Bool) -> Int32 {
        let start = Clock.monotonicNanoseconds()
        do {
            let loaded = try ModuleLoader.load(path: path, module: name, expectedName: name, deferManifest: deferManifest)
            let elapsed = Clock.monotonicNanoseconds() - start
            writeLine(#"{"nanoseconds":\#(elapsed),"process_types":\#(loaded.manifest.processes.count)}"#)
            return 0
        } catch {
            writeLine(#"{"error":"\#(error.message)"}"#)
            return 1
        }
    }

    /// Writes a line to stdout at once (the parent waits for it).
    static func writeLine(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}
