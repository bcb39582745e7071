import AgentModuleKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `children` mode: starts `/bin/sleep 1000` four ways, from the module's async code (a
/// thread of the Swift concurrency pool), and reports their pids in a `children` event:
/// `fork` (fork and exec), `spawn` (posix_spawn with default attributes, in the worker's
/// process group), `bare` (the same with an empty environment), `setsid` (posix_spawn in a
/// session of its own, out of reach of a process-group kill) and `process` (Foundation's
/// `Process`).
extension Fault {
    static func startChildren() throws -> [String: Int] {
        var pids: [String: Int] = [:]
        pids["fork"] = Int(try forkSleep())
        pids["spawn"] = Int(try spawnSleep(setsid: false, environment: environ))
        pids["bare"] = Int(try spawnSleep(setsid: false, environment: nil))
        pids["setsid"] = Int(try spawnSleep(setsid: true, environment: environ))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["1000"]
        try process.run()
        pids["process"] = Int(process.processIdentifier)
        return pids
    }

    private struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// The C strings are made before the fork: the child only calls execv.
    private static func forkSleep() throws -> pid_t {
        let path = strdup("/bin/sleep")
        let argument = strdup("1000")
        defer { free(path); free(argument) }
        var argv: [UnsafeMutablePointer<CChar>?] = [path, argument, nil]
        let pid = fork()
        if pid == 0 {
            execv(path!, &argv)
            _exit(127)
        }
        guard pid > 0 else { throw StartError(description: "fork: \(String(cString: strerror(errno)))") }
        return pid
    }

    /// `environment` nil: an empty one.
    private static func spawnSleep(setsid: Bool, environment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (0x80), which Swift does not import.
        if setsid { posix_spawnattr_setflags(&attributes, 0x80) }
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("1000"), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var empty: [UnsafeMutablePointer<CChar>?] = [nil]
        let rc = empty.withUnsafeMutableBufferPointer { posix_spawn(&pid, "/bin/sleep", nil, &attributes, argv, environment ?? $0.baseAddress) }
        guard rc == 0 else { throw StartError(description: "posix_spawn: \(String(cString: strerror(rc)))") }
        return pid
    }
}
