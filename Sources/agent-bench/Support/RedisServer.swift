import AgentSupervision
import Foundation

/// Debian's redis-server (found on the PATH or installed with apt-get at run time; nothing of
/// it is in the repository), started by the bench on a free loopback port without persistence
/// (`--save "" --appendonly no`, as a broker for Celery and RQ usually runs): the broker of the
/// task queue baselines of figure 10.
final class RedisServer {
    let pid: pid_t
    let port: Int
    /// `redis-server --version`'s first words, e.g. "Redis server v=7.0.15".
    let version: String
    var url: String { "redis://127.0.0.1:\(port)/0" }

    /// Starts redis-server with its log in `folder`; returns once it answers PING.
    init(folder: String) throws {
        let path = try Self.locate()
        version = Command.output(path, ["--version"]).map { $0.components(separatedBy: " sha=").first ?? $0 } ?? "redis-server"
        port = try HTTPProbe.freePort()
        let log = open(folder + "/redis.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { if log >= 0 { close(log) } }
        let arguments = ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                         "--dir", folder, "--daemonize", "no"]
        switch ProcessSpawner.spawn(path: path, arguments: arguments, environment: ProcessInfo.processInfo.environment,
                                    stdout: log, stderr: log, channel: -1, newGroup: false) {
        case .success(let pid): self.pid = pid
        case .failure(let error): throw BenchError("cannot start redis-server: \(error)")
        }
        let deadline = Clock.now() + 20
        while Clock.now() < deadline {
            if ping() { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw BenchError("redis-server exited at start (status \(status)); see \(folder)/redis.log")
            }
            usleep(20_000)
        }
        stop()
        throw BenchError("redis-server did not answer PING within 20 s; see \(folder)/redis.log")
    }

    /// One inline PING on a new connection; true when it answered +PONG.
    func ping() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let request = Array("PING\r\n".utf8)
        guard write(fd, request, request.count) == request.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &buffer, buffer.count)
        return count > 0 && String(decoding: buffer[0..<count], as: UTF8.self).hasPrefix("+PONG")
    }

    /// SIGTERM, then SIGKILL after 10 s; reaped.
    func stop() {
        kill(pid, SIGTERM)
        let deadline = Clock.now() + 10
        var status: Int32 = 0
        while Clock.now() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    /// redis-server from the PATH; when absent and the bench runs as root, `apt-get install -y
    /// redis-server` (after `apt-get update` if the first attempt fails).
    static func locate() throws -> String {
        if let found = which("redis-server") { return found }
        guard getuid() == 0 else {
            throw BenchError("redis-server is not installed and the bench is not root: install Debian's package (`apt-get install redis-server`)")
        }
        Progress.say("installing Debian's redis-server (apt-get install -y redis-server)…")
        let environment = ["DEBIAN_FRONTEND": "noninteractive"]
        if !Shell.run("/usr/bin/env", ["apt-get", "install", "-y", "-q", "redis-server"], environment: environment) {
            _ = Shell.run("/usr/bin/env", ["apt-get", "update", "-q"], environment: environment)
            _ = Shell.run("/usr/bin/env", ["apt-get", "install", "-y", "-q", "redis-server"], environment: environment)
        }
        guard let found = which("redis-server") else { throw BenchError("apt-get install redis-server did not install redis-server") }
        return found
    }

    private static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") + ["/usr/bin", "/usr/sbin"] {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
