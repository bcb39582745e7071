import CAgentSystem
import Foundation

/// Why the fork server does not use a module library's zygote (agent_system.h's `ZYGOTE_…`):
/// each of the module's workers then loads the module itself, a slower start and more memory
/// per worker. The server tells it once per library, in the reply to the first request that
/// found out.
package struct ZygoteRefusal: Equatable, Sendable {
    /// The zygote's verdict (`ZYGOTE_…`), or `ZYGOTE_DIED`.
    package let code: Int32

    package init(code: Int32) {
        self.code = code
    }

    /// The module asked for it (`agent_module_no_zygote`): nothing to mend.
    package var isDeclined: Bool { code == Int32(ZYGOTE_DECLINED) }

    /// What the zygote found, and what to change in the module.
    package var reason: String {
        switch Int(code) {
        case ZYGOTE_THREADS:
            "its load or its warm-up (agent_module_warm_up) left a thread running, which no forked worker would have; start threads in run_process"
        case ZYGOTE_DESCRIPTORS:
            "its load or its warm-up left a file descriptor open above fd 3; open files in run_process, or close them"
        case ZYGOTE_UNCHECKED:
            "it did not load in its zygote (each worker says why when it loads it)"
        case ZYGOTE_CHILDREN:
            "its load or its warm-up started a child process; start programs in run_process"
        case ZYGOTE_PROCESS_STATE:
            "its load or its warm-up changed the process's session, process group or child-subreaper flag"
        case ZYGOTE_DECLINED:
            "it exports agent_module_no_zygote"
        case ZYGOTE_FORK_FLAGS:
            "its load or its warm-up marked memory MADV_DONTFORK or MADV_WIPEONFORK, which a fork does not copy"
        case ZYGOTE_WARM_UP_STATE:
            "its warm-up (agent_module_warm_up) changed the process's own state (working folder, umask, signal dispositions, resource limits, priority, environment or fds 0-3), which only the zygote's workers would inherit"
        case ZYGOTE_DIED:
            "its zygote exited while loading it, without a word (a crash in a constructor or the warm-up, or a kill)"
        case ZYGOTE_LOAD_TIMEOUT:
            "its load and warm-up had not finished after \(ProcessPolicy.format(Self.loadLimit)) s, and its zygote was stopped; a constructor or agent_module_warm_up must not wait (on the network, a lock or input): do that in run_process"
        case ZYGOTE_KEPT_DYING:
            "its zygote died three times while forking workers (killed, or a crash)"
        default:
            "the zygote said \(code)"
        }
    }

    /// How long the fork server lets a zygote load and warm up its module (seconds): its
    /// default, or `AGENT_ZYGOTE_LOAD_LIMIT_MS` from the environment, as the server reads it.
    package static var loadLimit: Double {
        let text = ProcessInfo.processInfo.environment["AGENT_ZYGOTE_LOAD_LIMIT_MS"]
        // Digits only, as the server reads it (Int64 alone would take "+300").
        guard let text, text.first?.isASCII == true, text.first?.isNumber == true, let value = Int64(text), value > 0 else { return 10 }
        return Double(value) / 1000
    }

    /// The log's line for module `module`.
    package func line(module: String) -> String {
        "the zygote of module \(module) is not used: \(reason); each of its workers loads the module itself"
            + (isDeclined ? "" : " (a slower start and more memory per worker; see docs/writing-modules.md)")
    }
}
