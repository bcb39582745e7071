import Foundation

/// Names of signals for messages.
public enum SignalName {
    public static func of(_ signal: Int32) -> String {
        switch signal {
        case SIGHUP: "SIGHUP"
        case SIGINT: "SIGINT"
        case SIGQUIT: "SIGQUIT"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGSEGV: "SIGSEGV"
        case SIGPIPE: "SIGPIPE"
        case SIGTERM: "SIGTERM"
        case SIGSTOP: "SIGSTOP"
        case SIGTSTP: "SIGTSTP"
        case SIGTTIN: "SIGTTIN"
        case SIGTTOU: "SIGTTOU"
        case SIGCONT: "SIGCONT"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        case SIGALRM: "SIGALRM"
        case SIGVTALRM: "SIGVTALRM"
        case SIGPROF: "SIGPROF"
        case SIGIO: "SIGIO"
        case SIGPWR: "SIGPWR"
        case SIGSTKFLT: "SIGSTKFLT"
        case SIGXCPU: "SIGXCPU"
        case SIGXFSZ: "SIGXFSZ"
        case SIGCHLD: "SIGCHLD"
        case SIGURG: "SIGURG"
        case SIGWINCH: "SIGWINCH"
        case SIGSYS: "SIGSYS"
        default: "signal \(signal)"
        }
    }
}
