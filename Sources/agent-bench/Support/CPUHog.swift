import AgentSupervision
import Foundation

/// One process spinning on a core (`/usr/bin/yes` into /dev/null) while a measurement runs:
/// the row that shows how a tail degrades when the machine has other work.
enum CPUHog {
    /// Runs `body` with the hog spinning; the hog is killed and reaped after it, also on a throw.
    static func beside<T>(_ body: () throws -> T) throws -> T {
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(devNull) }
        let pid: pid_t
        switch ProcessSpawner.spawn(path: "/usr/bin/yes", arguments: ["yes"], environment: [:],
                                    stdout: devNull, stderr: devNull, channel: -1, newGroup: false) {
        case .success(let spawned): pid = spawned
        case .failure(let error): throw BenchError("cannot start the CPU hog /usr/bin/yes: \(error)")
        }
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        return try body()
    }
}
