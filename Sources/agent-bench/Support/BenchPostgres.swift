import AgentSupervision
import Foundation

/// Debian's PostgreSQL (installed with apt-get at run time when missing, as root; nothing of it
/// is in the repository), a cluster made by `initdb` in a folder of its own and run by the
/// bench as its child on a free loopback port with the defaults that matter for a queue
/// (fsync and synchronous_commit on): the database of figure 13, for the agents and for
/// procrastinate alike. As a child, the server's CPU counts as the bench's, not as other
/// processes'.
///
/// PostgreSQL refuses to run as root: as root, the cluster belongs to the unprivileged
/// `postgres` user, initdb runs through `runuser` and the server through `setpriv` (which
/// execs it, so that the bench's child is the postmaster itself).
final class BenchPostgres {
    static let user = "agent"
    /// Made for the run; the agents read it from PGPASSWORD, procrastinate from its DSN.
    let password = "bench-" + UUID().uuidString.prefix(12).lowercased()
    let folder: String
    let port: Int
    let binaries: String
    let pid: pid_t
    /// `postgres --version`, e.g. "postgres (PostgreSQL) 15.14".
    let version: String
    private let owner: (uid: uid_t, gid: gid_t, name: String)?

    /// `postgres://agent@127.0.0.1:PORT/DATABASE`: what the fleet settings take.
    func url(database: String) -> String { "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)" }
    /// A libpq connection string for Python's psycopg.
    func dsn(database: String) -> String { "postgresql://\(Self.user):\(password)@127.0.0.1:\(port)/\(database)" }

    init() throws {
        binaries = try Self.locate()
        version = Command.output(binaries + "/postgres", ["--version"])?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "postgres"
        if getuid() == 0 {
            guard let entry = getpwnam("postgres") else {
                throw BenchError("running as root, and there is no unprivileged `postgres` user to run PostgreSQL as (the postgresql package creates it)")
            }
            owner = (entry.pointee.pw_uid, entry.pointee.pw_gid, "postgres")
        } else {
            owner = nil
        }
        // Not in the scratch folder: the `postgres` user may not enter it (mode 0700, root's).
        folder = "/tmp/agent-bench-postgres-\(getpid())-\(UUID().uuidString.prefix(6))"
        port = try HTTPProbe.freePort()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if let owner { chown(folder, owner.uid, owner.gid) }
        chmod(folder, 0o700)
        let passwordFile = folder + "/password"
        try password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
        if let owner { chown(passwordFile, owner.uid, owner.gid) }
        guard Self.run(asUser: owner?.name, binaries + "/initdb",
                       ["-D", folder + "/data", "-U", Self.user, "--pwfile=" + passwordFile, "-E", "UTF8", "--auth-local=trust",
                        "--auth-host=scram-sha-256", "--no-sync", "--no-instructions"], log: folder + "/initdb.log") else {
            try? FileManager.default.removeItem(atPath: folder)
            throw BenchError("initdb failed; see \(folder)/initdb.log")
        }
        let log = open(folder + "/server.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { if log >= 0 { close(log) } }
        let server = [binaries + "/postgres", "-D", folder + "/data", "-p", String(port), "-k", folder, "-c", "listen_addresses=127.0.0.1",
                      "-c", "max_connections=200", "-c", "shared_buffers=256MB"]
            + Self.extraOptions.flatMap { ["-c", $0] }
        let argv = owner.map { ["/usr/bin/setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--init-groups", "--"] + server } ?? server
        switch ProcessSpawner.spawn(path: argv[0], arguments: argv, environment: ProcessInfo.processInfo.environment,
                                    stdout: log, stderr: log, channel: -1, newGroup: true) {
        case .success(let pid): self.pid = pid
        case .failure(let error): throw BenchError("cannot start postgres: \(error)")
        }
        let deadline = Clock.now() + 60
        while Clock.now() < deadline {
            if Self.run(asUser: nil, binaries + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port)], log: "/dev/null") { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw BenchError("postgres exited at start (status \(status)); see \(folder)/server.log")
            }
            usleep(50_000)
        }
        stop()
        throw BenchError("postgres did not accept connections within 60 s; see \(folder)/server.log")
    }

    /// A new empty database (createdb over the unix socket).
    func createDatabase(_ name: String) throws {
        guard Self.run(asUser: owner?.name, binaries + "/createdb", ["-h", folder, "-p", String(port), "-U", Self.user, name],
                       log: folder + "/createdb.log") else {
            throw BenchError("createdb \(name) failed; see \(folder)/createdb.log")
        }
    }

    /// Server settings added from AGENT_BENCH_POSTGRES_OPTIONS (space-separated `name=value`), for
    /// profiling: e.g. `shared_preload_libraries=pg_stat_statements` (see ``statements(database:)``).
    static var extraOptions: [String] {
        (ProcessInfo.processInfo.environment["AGENT_BENCH_POSTGRES_OPTIONS"] ?? "").split(separator: " ").map(String.init)
    }

    /// Whether pg_stat_statements is loaded (AGENT_BENCH_POSTGRES_OPTIONS).
    static var profiling: Bool { extraOptions.contains { $0.contains("pg_stat_statements") } }

    /// Runs `sql` with psql over the unix socket; its output (unaligned, `|`-separated), nil on failure.
    func psql(database: String, _ sql: String) -> String? {
        let arguments = ["-h", folder, "-p", String(port), "-U", Self.user, "-d", database, "-X", "-A", "-q", "-c", sql]
        if let owner {
            return Command.output("/usr/sbin/runuser", ["-u", owner.name, "--", binaries + "/psql"] + arguments)
        }
        return Command.output(binaries + "/psql", arguments)
    }

    /// Where PostgreSQL spent its time in `database` since ``resetStatements(database:)``: the
    /// statements by total time (pg_stat_statements), for profiling the fleet's queries.
    func statements(database: String, limit: Int = 12) -> String {
        psql(database: database, """
            SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms, rows,
                   wal_records, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
            FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY total_exec_time DESC LIMIT \(limit)
            """) ?? "(psql failed)"
    }

    /// Starts pg_stat_statements in `database` afresh.
    func resetStatements(database: String) {
        _ = psql(database: database, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")
    }

    /// A fast shutdown (SIGINT), SIGQUIT after 20 s; reaped; the cluster's folder removed.
    func stop() {
        kill(pid, SIGINT)
        let deadline = Clock.now() + 20
        var status: Int32 = 0
        var reaped = false
        while Clock.now() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                break
            }
            usleep(20_000)
        }
        if !reaped {
            kill(pid, SIGQUIT)
            waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs a PostgreSQL program to its end (as `user` through runuser when given), from /tmp
    /// (the `postgres` user may not enter the bench's working directory).
    private static func run(asUser user: String?, _ program: String, _ arguments: [String], log: String) -> Bool {
        let process = Process()
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", user, "--", program] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let output = FileHandle(forWritingAtPath: log) ?? FileHandle.nullDevice
        output.seekToEndOfFile()
        process.standardOutput = output
        process.standardError = output
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Debian's newest PostgreSQL; when absent and the bench runs as root, `apt-get install -y
    /// postgresql` (after `apt-get update` if the first attempt fails).
    static func locate() throws -> String {
        func found() -> String? {
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted(by: >)
            return versions.map { "/usr/lib/postgresql/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/postgres") }
        }
        if let path = found() { return path }
        guard getuid() == 0 else {
            throw BenchError("PostgreSQL is not installed and the bench is not root: install Debian's package (`apt-get install postgresql`)")
        }
        Progress.say("installing Debian's postgresql (apt-get install -y postgresql)…")
        let environment = ["DEBIAN_FRONTEND": "noninteractive"]
        if !Shell.run("/usr/bin/env", ["apt-get", "install", "-y", "-q", "postgresql"], environment: environment) {
            _ = Shell.run("/usr/bin/env", ["apt-get", "update", "-q"], environment: environment)
            _ = Shell.run("/usr/bin/env", ["apt-get", "install", "-y", "-q", "postgresql"], environment: environment)
        }
        guard let path = found() else { throw BenchError("apt-get install postgresql did not install postgres") }
        return path
    }
}
