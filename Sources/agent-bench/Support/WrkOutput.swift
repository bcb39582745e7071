/// What one run of wrk 4 printed with `--latency`: requests, duration, requests per second,
/// the latency distribution, errors, and the `key: value` lines a Lua script's `done` printed.
struct WrkOutput: Equatable {
    /// Requests completed (the "N requests in T" line).
    var requests: Int
    /// The run's length in seconds (the "in T" of that line).
    var seconds: Double
    /// The "Requests/sec:" line.
    var requestsPerSecond: Double
    /// Latency percentiles in microseconds from "Latency Distribution": 50, 75, 90, 99.
    var latencyPercentiles: [Int: Double]
    /// The "Max" column of the "Latency" line of "Thread Stats", in microseconds.
    var latencyMax: Double
    /// Socket errors (connect, read, write, timeout); all zero when wrk printed no such line.
    var socketErrors = SocketErrors()
    /// Answers whose status was not 2xx or 3xx.
    var non2xx = 0
    /// Lines `name: integer` printed by the script's `done` (e.g. `not_closed: 0`).
    var scriptCounts: [String: Int] = [:]

    struct SocketErrors: Equatable {
        var connect = 0
        var read = 0
        var write = 0
        var timeout = 0
        var total: Int { connect + read + write + timeout }
    }

    /// Why wrk's output could not be read: what was missing, with the output.
    struct ParseError: Error, CustomStringConvertible {
        var missing: String
        var output: String
        var description: String { "wrk printed no \(missing); its output was:\n\(output)" }
    }

    var latencyP50: Double? { latencyPercentiles[50] }
    var latencyP99: Double? { latencyPercentiles[99] }

    init(requests: Int, seconds: Double, requestsPerSecond: Double, latencyPercentiles: [Int: Double], latencyMax: Double) {
        self.requests = requests
        self.seconds = seconds
        self.requestsPerSecond = requestsPerSecond
        self.latencyPercentiles = latencyPercentiles
        self.latencyMax = latencyMax
    }

    /// Reads wrk's standard output; throws when a line the figures need is missing.
    init(parsing text: String) throws(ParseError) {
        var requests: (count: Int, seconds: Double)?
        var perSecond: Double?
        var maximum: Double?
        var percentiles: [Int: Double] = [:]
        var inDistribution = false
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let first = words.first else { continue }
            if line == "Latency Distribution" {
                inDistribution = true
                continue
            }
            if inDistribution, first.hasSuffix("%"), words.count == 2, let percent = Double(first.dropLast()),
               let value = Self.microseconds(words[1]) {
                percentiles[Int(percent.rounded())] = value
                continue
            }
            inDistribution = false
            if first == "Latency", words.count >= 4 {
                maximum = Self.microseconds(words[3])
            } else if words.count >= 4, words[1] == "requests", words[2] == "in", let count = Int(first),
                      let duration = Self.microseconds(words[3].hasSuffix(",") ? String(words[3].dropLast()) : words[3]) {
                requests = (count, duration / 1e6)
            } else if first == "Requests/sec:", words.count == 2 {
                perSecond = Double(words[1])
            } else if line.hasPrefix("Socket errors:") {
                socketErrors = Self.socketErrors(line.dropFirst("Socket errors:".count))
            } else if line.hasPrefix("Non-2xx or 3xx responses:"), let count = Int(words.last ?? "") {
                non2xx = count
            } else if words.count == 2, first.hasSuffix(":"), let count = Int(words[1]),
                      first.dropLast().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                scriptCounts[String(first.dropLast())] = count
            }
        }
        guard let requests else { throw ParseError(missing: "\"N requests in T\" line", output: text) }
        guard let perSecond else { throw ParseError(missing: "\"Requests/sec:\" line", output: text) }
        guard percentiles[99] != nil, percentiles[50] != nil else {
            throw ParseError(missing: "latency distribution (run it with --latency)", output: text)
        }
        guard let maximum else { throw ParseError(missing: "\"Latency\" line in Thread Stats", output: text) }
        self.requests = requests.count
        self.seconds = requests.seconds
        requestsPerSecond = perSecond
        latencyPercentiles = percentiles
        latencyMax = maximum
    }

    /// `123.45us`, `1.20ms`, `10.00s`, `2.00m`, `1.00h` → microseconds.
    static func microseconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("us", 1), ("ms", 1e3), ("s", 1e6), ("m", 60e6), ("h", 3600e6)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)) else { return nil }
            return value * scale
        }
        return nil
    }

    /// ` connect 0, read 12, write 0, timeout 3`
    private static func socketErrors(_ text: Substring) -> SocketErrors {
        var errors = SocketErrors()
        for part in text.split(separator: ",") {
            let words = part.split(separator: " ")
            guard words.count == 2, let count = Int(words[1]) else { continue }
            switch words[0] {
            case "connect": errors.connect = count
            case "read": errors.read = count
            case "write": errors.write = count
            case "timeout": errors.timeout = count
            default: break
            }
        }
        return errors
    }
}
