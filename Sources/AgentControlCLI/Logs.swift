import AgentBase
import ArgumentParser
import Foundation

struct Logs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Show a process's recent log: its workers' stdout and stderr, and the agent's lines about it.",
        discussion: """
        The running agent keeps, per process, the last 2,000 lines or 512 KiB of text (whichever \
        comes first): what its workers wrote on stdout and stderr, and the agent's own log lines \
        about it (starts, readiness, exits, restarts, what the module logged). A line longer than \
        16 KiB is cut and says so. The lines of a worker that died stay; a process removed by a \
        reload loses its log, and a restart of the agent starts every log afresh. Each line is \
        printed as TIME STREAM TEXT (stream: stdout, stderr or supervisor).
        """)

    @Argument(help: "The process's name in settings.json.")
    var name: String

    @OptionGroup var location: LocationOptions

    @Option(name: [.customShort("n"), .long], help: "At most this many lines (the newest; default: every line kept).")
    var lines: Int?

    @Option(name: .long, help: "Only lines since then: 30s, 10m, 2h, 1d, or an ISO 8601 time.")
    var since: String?

    @Flag(name: [.customShort("f"), .long], help: "Keep printing new lines (every 200 ms) until interrupted.")
    var follow = false

    @Flag(name: .long, help: "JSON lines: {\"seq\", \"time\", \"stream\", \"text\"}.")
    var json = false

    func validate() throws {
        if let lines, lines < 0 { throw ValidationError("-n/--lines must be 0 or more, not \(lines)") }
        if let since, TimeSpec.since(since) == nil {
            throw ValidationError("--since must be \(TimeSpec.sinceForm), not \"\(since)\"")
        }
    }

    func run() throws {
        try finish(location.daemon().logs(name: name, lines: lines, since: since, follow: follow, json: json))
    }
}
