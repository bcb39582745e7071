import Foundation

/// Every thread's stack of this test process, by gdb attached from a child: what a test that
/// waited past its deadline prints, so that a hang shows where each thread was.
enum ThreadDump {
    /// gdb's `thread apply all bt`, or why there is none (gdb missing, attaching refused).
    static func ofThisProcess() -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else {
            return "(no stack dump: gdb is not installed — apt-get install gdb)"
        }
        let argv = ["/usr/bin/gdb", "-p", String(getpid()), "-batch", "-nx", "-ex", "set pagination off", "-ex", "thread apply all bt"]
        guard let (status, text) = try? PostgresTestServer.spawnAndWait(argv) else { return "(no stack dump: gdb could not be started)" }
        return status == 0 ? text : "(gdb exited with \(status))\n" + text
    }
}
