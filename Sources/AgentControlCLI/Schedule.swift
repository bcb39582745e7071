import AgentCLI
import AgentRuntime
import AgentWork
import ArgumentParser
import Foundation

struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Check cron expressions and look at the agent's schedules.",
        discussion: """
        Schedules are defined under "schedules" in settings.json: a "cron" expression (five fields \
        minute hour day-of-month month day-of-week, or six with seconds first; lists, ranges, steps, \
        month and weekday names; @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually, \
        @reboot) in a "timezone" from the system's tz database. Daylight saving as cronie handles it: \
        a fixed time the clocks skip fires once right after the jump, a fixed time they repeat fires \
        once, an expression with a `*` minute or hour keeps its rhythm, and a change of more than 3 \
        hours is a clock correction.
        """,
        subcommands: [ScheduleNext.self] + ScheduleAgentCommands.all + ResourceDefinitionChange.schedule)
}

struct ScheduleNext: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Print the coming fire times of a cron expression, or of a schedule of the running agent: ISO 8601 local times with their UTC offset, one a line.",
        discussion: """
        Check an expression before trusting it: `agent-control schedule next "30 2 * * *" \
        --timezone Europe/Berlin --after 2026-03-28T00:00:00Z -n 3` shows the night the clocks \
        skip 02:30 (it fires at 03:00+02:00). An invalid expression is refused naming the field \
        and the offending part.
        """)

    @Argument(help: "A cron expression in quotes (\"0 3 * * *\", \"*/10 * * * * *\", @daily), or the name of a schedule of the running agent (in its own time zone).")
    var expression: String

    @Option(name: .customShort("n"), help: "How many fire times (1 to 10000; default 10).")
    var count: Int = 10

    @Option(name: .long, help: "The time zone, from the tz database (e.g. Europe/Berlin, UTC; default: the system's, or TZ).")
    var timezone: String?

    @Option(name: .long, help: "Start after this instant instead of now: ISO 8601 with an offset or Z (2026-03-28T00:00:00Z).")
    var after: String?

    @OptionGroup var location: LocationOptions

    func validate() throws {
        if !(1...10_000).contains(count) { throw ValidationError("-n must be from 1 to 10000, not \(count)") }
    }

    func run() throws {
        let zone = try Self.zone(named: timezone)
        let start = try after.map(Self.instant) ?? Date()
        if Self.isExpression(expression) {
            try printFireTimes(of: expression, in: zone, after: start)
        } else {
            try printFireTimes(ofSchedule: expression, in: zone, after: start)
        }
    }

    /// An expression has fields separated by blanks, or is a shortcut; a schedule's name is one word.
    static func isExpression(_ text: String) -> Bool {
        text.hasPrefix("@") || text.contains(where: { $0 == " " || $0 == "\t" })
    }

    /// The fire times of a schedule configured in the agent, by its name.
    private func printFireTimes(ofSchedule name: String, in zone: TimeZone, after start: Date) throws {
        let hint = "write five fields (or six, seconds first) in quotes, e.g. \"0 3 * * *\", or a shortcut such as @daily"
        guard (try? location.daemon()) != nil else {
            throw CommandFailure.report("\"\(name)\" is not a cron expression (\(hint)), and there is no agent here to have a schedule of that name", exitCode: AgentLauncher.ExitCode.usage)
        }
        guard timezone == nil, after == nil else {
            throw CommandFailure.report("\"\(name)\" is a schedule's name: it fires in its own time zone, from now (--timezone and --after are for an expression)", exitCode: AgentLauncher.ExitCode.usage)
        }
        try ScheduleAgentCommands.printNext(name: name, count: count, location: location)
    }

    /// The fire times of an expression given on the command line.
    private func printFireTimes(of text: String, in zone: TimeZone, after start: Date) throws {
        let cron: CronExpression
        do {
            cron = try CronExpression(parsing: text)
        } catch {
            throw CommandFailure.report("invalid cron expression \"\(text)\": \(error)", exitCode: AgentLauncher.ExitCode.usage)
        }
        if cron.isReboot {
            FileHandle.standardError.write(Data("note: @reboot fires once each time the agent starts; it has no calendar times\n".utf8))
            return
        }
        var cursor = start
        for index in 0..<count {
            guard let next = cron.nextFire(after: cursor, in: zone) else {
                if index == 0 {
                    throw CommandFailure.report("\"\(cron)\" never fires: no calendar day matches its day of month, month and day of week (e.g. 30 February)", exitCode: AgentLauncher.ExitCode.usage)
                }
                break
            }
            print(ZonedTimestamp.string(next, in: zone))
            cursor = next
        }
    }

    /// A zone of the system's tz database (the system's own without a name).
    static func zone(named name: String?) throws -> TimeZone {
        guard let name else { return TimeZone.current }
        guard let zone = TimeZone(identifier: name) else {
            throw CommandFailure.report("unknown time zone \"\(name)\"; expected a name from the tz database such as Europe/Berlin, America/New_York or UTC (the files under /usr/share/zoneinfo)", exitCode: AgentLauncher.ExitCode.usage)
        }
        return zone
    }

    static func instant(_ text: String) throws -> Date {
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        throw ValidationError("--after must be an ISO 8601 time with an offset or Z (2026-03-28T00:00:00Z), not \"\(text)\"")
    }
}
