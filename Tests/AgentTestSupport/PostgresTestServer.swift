import CAgentSystem
import Foundation

/// A real PostgreSQL server for the fleet's tests: Debian's `postgresql` binaries, a cluster
/// made by `initdb` in a temporary folder, started on a free loopback port (and a unix socket
/// in that folder), torn down at the end of the test process. One server per test process;
/// each test takes a database of its own (``makeDatabase()``).
///
/// PostgreSQL refuses to run as root: as root, the cluster belongs to the unprivileged
/// `postgres` user (the package creates it), and its commands run through `runuser`.
/// A leftover cluster of a test process that died is stopped by the next one.
package final class PostgresTestServer: @unchecked Sendable {
    /// The role agents log in as (the cluster's superuser), and its password (TCP asks for it).
    package static let user = "agent"
    package static let password = "fleet-test-password"

    package let folder: String
    package let port: Int
    package let binaries: String
    private let runAs: String?
    private let lock = NSLock()
    private var databases = 0

    /// Why no server can be had here (nil: it can), for `.enabled(if:)`: the binaries and,
    /// as root, the `postgres` user — found without starting a server. The tests' traits are
    /// built when the tests are discovered and evaluated before they run, on the process's
    /// cooperative pool: starting the server there (initdb, pg_ctl; seconds, a minute under
    /// load) held every test of the process, a filtered run of one unit test included, and
    /// started a server for runs that needed none. A server that cannot be started is the
    /// failure of the test that ``require()``s it.
    package static var unavailableReason: String? { prerequisites.missing }

    private static let prerequisites: (binaries: String?, runAs: (name: String, uid: uid_t, gid: gid_t)?, missing: String?) = {
        guard let binaries = findBinaries() else {
            return (nil, nil, "PostgreSQL is not installed: no initdb, pg_ctl and postgres in /usr/lib/postgresql/*/bin or on PATH (apt-get install postgresql)")
        }
        guard getuid() == 0 else { return (binaries, nil, nil) }
        guard let user = getpwnam("postgres") else {
            return (binaries, nil, "running as root, and there is no unprivileged `postgres` user to run PostgreSQL as (the postgresql package creates it)")
        }
        return (binaries, ("postgres", user.pointee.pw_uid, user.pointee.pw_gid), nil)
    }()

    /// The start of the folder of every server this process starts (its clusters' data, socket
    /// and log): a leftover of a process that is gone is swept by the next one.
    package static var sharedFolderPrefix: String { "/tmp/agent-tests-postgres-\(getpid())-" }

    /// The server of this test process, started at first use (by a test's body, on its own
    /// thread: ``TestThreads``).
    package static func require() throws -> PostgresTestServer {
        switch shared {
        case .success(let server): return server
        case .failure(let error): throw error
        }
    }

    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    private static let shared: Result<PostgresTestServer, Unavailable> = {
        do {
            let server = try PostgresTestServer()
            atexit { PostgresTestServer.stopShared() }
            return .success(server)
        } catch let error as Unavailable {
            return .failure(error)
        } catch {
            return .failure(Unavailable(description: "\(error)"))
        }
    }()

    private static func stopShared() {
        if case .success(let server) = shared { server.stop() }
    }

    /// `postgres://agent@127.0.0.1:PORT/DATABASE`: what the fleet settings take.
    package func url(database: String) -> String { "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)" }

    /// A new empty database (`CREATE DATABASE` through the unix socket); its name.
    package func makeDatabase() throws -> String {
        lock.lock()
        databases += 1
        let name = "t\(databases)_\(UUID().uuidString.prefix(6).lowercased())"
        lock.unlock()
        try run(binaries + "/createdb", ["-h", folder, "-p", String(port), "-U", Self.user, name])
        return name
    }

    /// Runs `sql` in `database` with psql (unaligned, no headers, `|` between columns): for a
    /// test that looks at what the stores did from outside them.
    @discardableResult
    package func sql(database: String, _ sql: String) throws -> String {
        try run(binaries + "/psql", ["-h", folder, "-p", String(port), "-U", Self.user, "-d", database, "-X", "-q", "-A", "-t",
                                     "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Stops the server now (fast: no checkpoint) and removes its folder.
    package func stop() {
        _ = try? run(binaries + "/pg_ctl", ["-D", folder + "/data", "-m", "immediate", "-w", "stop"])
        Self.remove(folder)
    }

    /// `rm -rf`, not FileManager's removeItem: a cluster holds some 350 files per database
    /// the tests made, and removeItem took about 20 s for one suite's 38 (load 30) in the
    /// test process's exit, which every `swift test` waits for; rm took under a second.
    private static func remove(_ folder: String) {
        _ = try? spawnAndWait(["/bin/rm", "-rf", "--one-file-system", folder])
    }

    /// A server of its own (for a test that stops it); the caller ``stop()``s it. `address`:
    /// one more IPv4 address to listen on and to let agents log in from (its /24), e.g. the
    /// host's end of a veth pair into a network namespace; it must exist before.
    /// `maxConnections`: the server's `max_connections` (beyond it a login is refused with
    /// "sorry, too many clients already").
    package static func makePrivate(alsoListeningOn address: String? = nil, maxConnections: Int = 500) throws -> PostgresTestServer {
        try PostgresTestServer(alsoListeningOn: address, maxConnections: maxConnections)
    }

    /// Stops the server, its clients cut off at once (as a lost database host), keeping what
    /// it acknowledged: a fast shutdown checkpoints (an immediate one would lose the last
    /// commits, acknowledged early with synchronous_commit off, as a durable server never does).
    package func pause() throws {
        try run(binaries + "/pg_ctl", ["-D", folder + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts a paused server again, on the same port.
    package func resume() throws { try start() }

    private let extraAddress: String?
    private let maxConnections: Int

    private init(alsoListeningOn address: String? = nil, maxConnections: Int = 500) throws {
        extraAddress = address
        self.maxConnections = maxConnections
        guard let binaries = Self.prerequisites.binaries, Self.prerequisites.missing == nil else {
            throw Unavailable(description: Self.prerequisites.missing ?? "PostgreSQL is not installed")
        }
        self.binaries = binaries
        runAs = Self.prerequisites.runAs?.name
        ownerID = Self.prerequisites.runAs.map { ($0.uid, $0.gid) }
        Self.sweepLeftovers(binaries: binaries, runAs: runAs)
        folder = Self.sharedFolderPrefix + String(UUID().uuidString.prefix(6))
        port = try Self.freePort()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if let ownerID { chown(folder, ownerID.0, ownerID.1) }
        chmod(folder, 0o700)
        do {
            let passwordFile = folder + "/password"
            try Self.password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
            if let ownerID { chown(passwordFile, ownerID.0, ownerID.1) }
            // Trust on the unix socket (the tests' own administration), a password over TCP (as agents connect).
            try run(binaries + "/initdb", ["-D", folder + "/data", "-U", Self.user, "--pwfile=" + passwordFile, "-E", "UTF8",
                                            "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions"])
            if let address {
                let hba = folder + "/data/pg_hba.conf"
                let line = "host all all \(address)/24 scram-sha-256\n"
                guard let handle = FileHandle(forWritingAtPath: hba) else { throw Unavailable(description: "cannot open \(hba)") }
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                try handle.close()
            }
            try start()
        } catch {
            stop()
            throw Unavailable(description: "could not start a PostgreSQL server for the tests: \(error)")
        }
    }

    private let ownerID: (uid_t, gid_t)?

    private func start() throws {
        // fsync off: a test's database need not survive a power cut, and the machine is shared.
        let addresses = ["127.0.0.1"] + (extraAddress.map { [$0] } ?? [])
        let options = "-p \(port) -k \(folder) -c listen_addresses=\(addresses.joined(separator: ",")) -c fsync=off -c synchronous_commit=off -c max_connections=\(maxConnections)"
        try run(binaries + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-o", options, "-w", "-t", "60", "start"])
    }

    @discardableResult
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        let argv = runAs.map { ["/usr/sbin/runuser", "-u", $0, "--", program] } ?? [program]
        let (status, text) = try Self.spawnAndWait(argv + arguments)
        guard status == 0 else {
            let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)).map { "\nserver log:\n" + $0.suffix(2000) } ?? ""
            throw Unavailable(description: "\((program as NSString).lastPathComponent) \(arguments.joined(separator: " ")) exited with \(status): \(text)\(log)")
        }
        return text
    }

    /// agent_spawn (posix_spawn) and waitpid on that pid, output into a file: Foundation's Process hung in
    /// waitUntilExit here (started from the lazy `shared` inside a test trait's evaluation), and
    /// pg_ctl's server must not hold a pipe of ours open.
    package static func spawnAndWait(_ argv: [String]) throws -> (Int32, String) {
        let outputPath = "/tmp/agent-tests-postgres-output-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { unlink(outputPath) }
        // stdin /dev/null, stdout and stderr the file, nothing else of ours: agent_spawn closes
        // every other descriptor in the child. A bare posix_spawn passes on each one without
        // FD_CLOEXEC, and Foundation's pipes have none: the server (a daemon living to the end
        // of the test process) held the write ends of a curl another test was reading at that
        // moment; curl exited, its output never reached its end, and
        // theReadRoleReadsButChangesNothing waited until the watchdog (reproduced 2026-11-26:
        // the reading thread in readDataToEndOfFile, curl a zombie, the pipe's write end open
        // in every postgres process).
        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            if input >= 0 { close(input) }
            if output >= 0 { close(output) }
        }
        guard input >= 0, output >= 0 else { throw Unavailable(description: "could not open \(outputPath): errno \(errno)") }
        // In /tmp: the `postgres` user may not be able to enter the test's working directory.
        let command = ["/bin/sh", "-c", "cd /tmp && exec \"$@\"", "sh"] + argv
        var cArguments: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = agent_spawn("/bin/sh", &cArguments, environ, input, output, output, -1, 0, &pid)
        guard spawned == 0 else { throw Unavailable(description: "could not start \(argv[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Unavailable(description: "waitpid \(argv[0]): errno \(errno)") }
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS by hand (macros Swift does not import).
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), text)
    }

    /// The folder of initdb, pg_ctl, postgres and createdb: Debian's newest version first, then PATH.
    package static func findBinaries() -> String? {
        let needed = ["initdb", "pg_ctl", "postgres", "createdb"]
        func complete(_ folder: String) -> Bool {
            needed.allSatisfy { FileManager.default.isExecutableFile(atPath: folder + "/" + $0) }
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where complete("/usr/lib/postgresql/\(version)/bin") { return "/usr/lib/postgresql/\(version)/bin" }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) {
            let initdb = folder + "/initdb"
            guard FileManager.default.fileExists(atPath: initdb) else { continue }
            let resolved = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
            if complete(resolved) { return resolved }
        }
        return nil
    }

    /// A port nobody listens on now (bound to 0, read back, released).
    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Unavailable(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw Unavailable(description: "bind to a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Clusters of test processes that are gone (killed before their `atexit`): stopped and removed.
    private static func sweepLeftovers(binaries: String, runAs: String?) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in names where name.hasPrefix("agent-tests-postgres-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 4, let pid = Int32(parts[3]), pid != getpid() else { continue }
            // Alive (and not a zombie): another test process's server.
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] != "Z" { continue }
            let arguments = ["-D", "/tmp/\(name)/data", "-m", "immediate", "-w", "stop"]
            let argv = runAs.map { ["/usr/sbin/runuser", "-u", $0, "--", binaries + "/pg_ctl"] } ?? [binaries + "/pg_ctl"]
            _ = try? spawnAndWait(argv + arguments)
            remove("/tmp/" + name)
        }
    }
}
