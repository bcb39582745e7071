import Foundation

/// One-time work of a start that depends on nothing the start reads, begun on a thread of its
/// own so that it is done by the time the settings are checked.
///
/// The start is CPU-bound on two cores: once the fork server is spawned, its exec and dynamic
/// linking take the second core, and work moved to a third thread then only queues behind
/// them. Before that, while agent-control parses its arguments (ArgumentParser, ~6 ms in a
/// release build), takes the run folder and makes the cgroups, the second core is idle:
/// compiling the host settings' schema (the `HostSchema.validator` that `AgentSettings.load`
/// uses, ~2.5 ms of CPU in a release build, ~8 ms in a debug one) fits there instead of on the
/// path to the first spawn. Nothing changes but when: a `static let` is initialized once, by
/// whichever thread comes first, the other waiting for it; a compile that fails stops the
/// process the same way. The compile uses no C library's state (the host schema has no
/// `pattern`, so no ICU) that an `exit` of the main thread, after a usage error or `--help`,
/// could tear down under it; the first NFC normalization (CoreFoundation, ~0.4 ms) was left
/// where it is for that reason.
package enum StartWarmUp {
    /// Starts the warm-up, once per process (later calls do nothing). The thread blocks every
    /// signal, so that it may start before the supervisor blocks SIGCHLD for its signalfd:
    /// no signal meant for the process is ever taken by it.
    package static func begin() {
        _ = started
    }

    private static let started: Void = {
        var all = sigset_t()
        var saved = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &saved)
        // The thread inherits the mask it is created with.
        Thread.detachNewThread {
            _ = HostSchema.validator
        }
        pthread_sigmask(SIG_SETMASK, &saved, nil)
    }()
}
