import Foundation
import Testing

/// A debugger's hold on a process, for tests of what the runtime does while one holds its
/// workers, zygotes or fork server.
package enum DebuggerHold {
    /// A debugger's hold on a process (ptrace): `hold` seizes and stops it, `release` takes
    /// what the kernel reports to the tracer (its death too) and lets it go. Both from the
    /// same thread (ptrace's tracer is a thread): a test that is not async.
    package static func make() throws -> (hold: @convention(c) (Int32) -> Int32, release: @convention(c) (Int32) -> Void) {
        let library = try CModuleFixture.build("holder", source: """
        #define _GNU_SOURCE
        #include <errno.h>
        #include <sys/ptrace.h>
        #include <sys/wait.h>
        #include <unistd.h>
        /* 0 once `pid` is stopped under this thread's trace, else -errno. */
        int hold(int pid) {
            if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) return -errno;
            if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0) return -errno;
            int status = 0;
            for (int i = 0; i < 30000; i++) {
                int got = waitpid(pid, &status, __WALL | WNOHANG);
                if (got == pid) return 0;
                if (got < 0) return -errno;
                usleep(1000);
            }
            return -ETIMEDOUT;
        }
        void release(int pid) {
            int status = 0;
            while (waitpid(pid, &status, __WALL | WNOHANG) > 0) {}
            ptrace(PTRACE_DETACH, pid, 0, 0);
        }
        """)
        let handle = try #require(dlopen(library, RTLD_NOW))
        return (unsafeBitCast(try #require(dlsym(handle, "hold")), to: (@convention(c) (Int32) -> Int32).self),
                unsafeBitCast(try #require(dlsym(handle, "release")), to: (@convention(c) (Int32) -> Void).self))
    }
}
