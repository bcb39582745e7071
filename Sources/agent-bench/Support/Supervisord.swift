import AgentSupervision
import Foundation

/// supervisord from PyPI, installed at run time into a virtual environment in the scratch
/// folder (nothing of it is in the repository), running `count` sleeping programs with its
/// XML-RPC interface on a loopback inet_http_server: the baseline of the HTTP figure.
final class Supervisord {
    /// The version the reference figures were taken with.
    static let requirement = "supervisor==4.3.0"
    /// The XML-RPC call the figure measures, as supervisorctl status makes it.
    static let getAllProcessInfo = """
        <?xml version='1.0'?>
        <methodCall>
        <methodName>supervisor.getAllProcessInfo</methodName>
        <params>
        </params>
        </methodCall>

        """

    let folder: String
    let port: Int
    let pid: pid_t
    let version: String

    /// Installs supervisor (pip caches the wheel between runs), writes the configuration and
    /// starts supervisord in the foreground; returns once every program is RUNNING.
    init(environment: BenchEnvironment, programs count: Int) throws {
        folder = environment.folder("supervisord")
        _ = try PythonVirtualEnvironment.install([Self.requirement], in: folder)
        version = Command.output(folder + "/venv/bin/supervisord", ["--version"]).map { "supervisord \($0)" } ?? "supervisord"
        port = try HTTPProbe.freePort()
        let programs = (0..<count).map { index in
            """
            [program:idle\(index)]
            command=/bin/sleep infinity
            autorestart=true
            stdout_logfile=NONE
            stderr_logfile=NONE

            """
        }
        let configuration = """
            [supervisord]
            nodaemon=true
            logfile=\(folder)/supervisord.log
            pidfile=\(folder)/supervisord.pid
            childlogdir=\(folder)
            loglevel=warn

            [inet_http_server]
            port=127.0.0.1:\(port)

            [rpcinterface:supervisor]
            supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

            """ + programs.joined(separator: "\n")
        let file = folder + "/supervisord.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let spawned = ProcessSpawner.spawn(path: folder + "/venv/bin/supervisord", arguments: ["supervisord", "-c", file],
                                           environment: ProcessInfo.processInfo.environment, stdout: devNull, stderr: devNull,
                                           channel: -1, newGroup: false)
        switch spawned {
        case .success(let pid): self.pid = pid
        case .failure(let error): throw BenchError("cannot start supervisord: \(error)")
        }
        // Programs are RUNNING after startsecs (1 s) of life.
        let deadline = Clock.now() + 30
        var running = 0
        while Clock.now() < deadline {
            if let answer = try? call(), answer.status == 200 {
                running = answer.body.components(separatedBy: "<string>RUNNING</string>").count - 1
                if running == count { return }
            }
            usleep(200_000)
        }
        stop()
        throw BenchError("supervisord: \(running) of \(count) programs RUNNING after 30 s; see \(folder)/supervisord.log")
    }

    /// One `supervisor.getAllProcessInfo` on a new connection.
    func call() throws -> HTTPProbe.Answer {
        try HTTPProbe.request(port: port, method: "POST", path: "/RPC2", headers: ["Content-Type": "text/xml"], body: Self.getAllProcessInfo)
    }

    /// SIGTERM; supervisord stops its programs, then exits (SIGKILL after 20 s).
    func stop() {
        kill(pid, SIGTERM)
        let deadline = Clock.now() + 20
        var status: Int32 = 0
        while Clock.now() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }
}
