import AgentTestSupport
import Foundation
import Testing

/// The tests' PostgreSQL server starts when a test needs it, never while the tests are
/// discovered: the traits that ask whether PostgreSQL is there are built then, on the test
/// process's cooperative pool, and a server started there held every test of the process for
/// its initdb (seconds; a minute under load), and started a server for runs that needed none.
@Suite(.ownThreads) struct PostgresTestServerTests {
    /// Set for the child run of ``aRunOfTestsThatNeedNoDatabaseStartsNoPostgreSQLServer()``.
    static let inChild = ProcessInfo.processInfo.environment["AGENT_TEST_POSTGRES_CHILD"] == "1"

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aRunOfTestsThatNeedNoDatabaseStartsNoPostgreSQLServer() throws {
        // This test binary again, discovering every test (and so building every trait) and
        // running only the check below.
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let result = try runProgram(binary, ["--testing-library", "swift-testing", "--filter", "PostgresTestServerTests/noServerOfThisProcessExists"],
                                    environment: ["AGENT_TEST_POSTGRES_CHILD": "1"], timeout: 120)
        #expect(result.status == 0, "the child run failed:\n\(result.stdout.suffix(3000))\n\(result.stderr.suffix(2000))")
        // Swift Testing reports on stderr.
        #expect((result.stdout + result.stderr).contains("Test run with 1 test"), "the child ran no check:\n\(result.stderr.suffix(3000))")
    }

    @Test(.enabled(if: inChild, "the check of a child run (AGENT_TEST_POSTGRES_CHILD=1), started by the test above"))
    func noServerOfThisProcessExists() throws {
        let prefix = PostgresTestServer.sharedFolderPrefix
        let found = try FileManager.default.contentsOfDirectory(atPath: "/tmp").map { "/tmp/" + $0 }.filter { $0.hasPrefix(prefix) }
        #expect(found.isEmpty, "a PostgreSQL server was started before any test needed one: \(found)")
    }

    /// The server is a daemon that lives to the end of the test process: it must hold none of
    /// the process's descriptors. It held those of a curl another test was reading when it
    /// started, whose output then never reached its end (theReadRoleReadsButChangesNothing
    /// waited until the watchdog).
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func theServerHoldsNoDescriptorOfTheTestProcess() throws {
        let pipe = Pipe()  // open while the server starts, as another test's curl output is
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(pipe.fileHandleForWriting.fileDescriptor)")
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let postmaster = try #require(pid_t(try String(contentsOfFile: server.folder + "/data/postmaster.pid", encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""))
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(postmaster)/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(postmaster)/fd/\($0)")
        }
        #expect(!held.isEmpty, "the server's descriptors could not be read")
        #expect(!held.contains(ours), "the server holds the test process's \(ours): \(held)")
        try pipe.fileHandleForWriting.close()
    }
}
