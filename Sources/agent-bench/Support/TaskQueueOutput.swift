import Foundation

/// What one run of the task queue driver (``TaskQueueDriver``, Celery or RQ) printed: its last
/// line is one JSON object with the system, its version, the enqueue → start latencies of the
/// tasks run one at a time, the burst's completions and time, and the errors it met.
struct TaskQueueOutput: Decodable, Equatable {
    /// "celery", "rq-simple" or "rq-fork".
    var system: String
    /// e.g. "celery 5.7.0".
    var version: String
    /// enqueue → task start of each task of the latency phase, in nanoseconds (CLOCK_REALTIME
    /// on both ends).
    var latencyNanoseconds: [Int64]?
    var throughput: Throughput?
    /// What went wrong (an exception, a worker that exited early); empty when the run completed.
    var errors: [String]

    /// The burst: `tasks` enqueued as fast as the driver could, then a sentinel task; the time
    /// from the first enqueue to the sentinel's report, and how many tasks were seen completed.
    struct Throughput: Decodable, Equatable {
        var tasks: Int
        var completed: Int
        var seconds: Double
        /// How long the driver took to enqueue the burst.
        var enqueueSeconds: Double

        enum CodingKeys: String, CodingKey {
            case tasks, completed, seconds
            case enqueueSeconds = "enqueue_seconds"
        }

        /// Completed tasks per second.
        var perSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
    }

    enum CodingKeys: String, CodingKey {
        case system, version, throughput, errors
        case latencyNanoseconds = "latency_ns"
    }

    /// Why the driver's output could not be read, with the output.
    struct ParseError: Error, CustomStringConvertible {
        var reason: String
        var output: String
        var description: String { "the task queue driver's output: \(reason); it printed:\n\(output.suffix(2000))" }
    }

    init(system: String, version: String, latencyNanoseconds: [Int64]?, throughput: Throughput?, errors: [String] = []) {
        self.system = system
        self.version = version
        self.latencyNanoseconds = latencyNanoseconds
        self.throughput = throughput
        self.errors = errors
    }

    /// Reads the driver's standard output: the last line that starts with `{` (a library may
    /// print before it).
    init(parsing text: String) throws(ParseError) {
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { $0.hasPrefix("{") }) else {
            throw ParseError(reason: "no JSON line", output: text)
        }
        do {
            self = try JSONDecoder().decode(Self.self, from: Data(line.utf8))
        } catch {
            throw ParseError(reason: "its JSON line does not decode (\(error))", output: text)
        }
    }

    /// enqueue → start in milliseconds.
    var latencies: Samples { Samples((latencyNanoseconds ?? []).map { Double($0) / 1e6 }) }

    /// Why the run does not count: the driver's errors, a phase missing, a task not completed,
    /// a latency below zero (clocks disagree: impossible with one CLOCK_REALTIME).
    var problems: [String] {
        var problems = errors
        if errors.isEmpty {
            if latencyNanoseconds?.isEmpty ?? true { problems.append("no latency measured") }
            if throughput == nil { problems.append("no throughput measured") }
        }
        if let throughput, throughput.completed != throughput.tasks {
            problems.append("\(throughput.completed) of \(throughput.tasks) tasks of the burst completed")
        }
        if let negative = latencyNanoseconds?.first(where: { $0 < 0 }) {
            problems.append("a task started \(negative) ns before it was enqueued")
        }
        return problems
    }
}
