import AgentTestSupport
import Testing

@testable import agent_bench

/// agent-bench reads wrk's output for the HTTP figure: these are outputs of Debian's wrk 4.1.0
/// recorded against supervisord 4.3.0 (keep-alive with the bench's Lua script, which prints its
/// counts in `done`; with `Connection: close`, which supervisord's server honours without
/// saying so, so that wrk counts a read error per request; a path it does not serve).
@Suite(.ownThreads) struct WrkOutputTests {
    static let keepAliveWithScript = """
        Running 5s test @ http://127.0.0.1:39123/RPC2
          2 threads and 32 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency   248.10ms  133.03ms 824.32ms   71.92%
            Req/Sec    77.33     51.54   233.00     67.31%
          Latency Distribution
             50%  259.79ms
             75%  308.00ms
             90%  355.87ms
             99%  807.33ms
          673 requests in 5.12s, 14.32MB read
        Requests/sec:    131.55
        Transfer/sec:      2.80MB
        closed: 0
        answers: 673
        """

    static let closedWithoutSaying = """
        Running 5s test @ http://127.0.0.1:39123/RPC2
          2 threads and 32 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency   208.09ms  170.45ms 697.77ms   61.96%
            Req/Sec    93.65    117.68   540.00     91.25%
          Latency Distribution
             50%  181.12ms
             75%  323.96ms
             90%  456.10ms
             99%  636.31ms
          810 requests in 5.11s, 17.17MB read
          Socket errors: connect 0, read 806, write 0, timeout 0
        Requests/sec:    158.41
        Transfer/sec:      3.36MB
        closed: 0
        answers: 810
        """

    static let notFound = """
        Running 1s test @ http://127.0.0.1:39123/nope
          1 threads and 2 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency    15.74ms   12.52ms  48.64ms   59.67%
            Req/Sec   135.82     39.28   191.00     72.73%
          Latency Distribution
             50%   15.29ms
             75%   24.94ms
             90%   35.85ms
             99%   48.24ms
          149 requests in 1.10s, 38.41KB read
          Non-2xx or 3xx responses: 149
        Requests/sec:    135.07
        Transfer/sec:     34.82KB
        """

    @Test func readsRequestsRateLatencyDistributionAndTheScriptsCounts() throws {
        let output = try WrkOutput(parsing: Self.keepAliveWithScript)
        #expect(output.requests == 673)
        #expect(near(output.seconds, 5.12))
        #expect(output.requestsPerSecond == 131.55)
        #expect(output.latencyPercentiles.keys.sorted() == [50, 75, 90, 99])
        #expect(near(output.latencyPercentiles[50], 259_790) && near(output.latencyPercentiles[75], 308_000))
        #expect(near(output.latencyPercentiles[90], 355_870) && near(output.latencyPercentiles[99], 807_330))
        #expect(near(output.latencyMax, 824_320))
        #expect(output.socketErrors == WrkOutput.SocketErrors())
        #expect(output.non2xx == 0)
        #expect(output.scriptCounts == ["closed": 0, "answers": 673])
    }

    @Test func readsSocketErrors() throws {
        let output = try WrkOutput(parsing: Self.closedWithoutSaying)
        #expect(output.socketErrors == WrkOutput.SocketErrors(connect: 0, read: 806, write: 0, timeout: 0))
        #expect(output.socketErrors.total == 806)
        #expect(output.requests == 810)
        #expect(output.requestsPerSecond == 158.41)
    }

    @Test func readsAnswersThatWereNot2xxAndMicrosecondsAndKilobytes() throws {
        let output = try WrkOutput(parsing: Self.notFound)
        #expect(output.non2xx == 149)
        #expect(output.requests == 149)
        #expect(near(output.seconds, 1.1))
        #expect(near(output.latencyP50, 15_290))
        #expect(near(output.latencyP99, 48_240))
        #expect(output.scriptCounts.isEmpty)
    }

    @Test func convertsEveryTimeUnitWrkPrints() {
        #expect(near(WrkOutput.microseconds("812.00us"), 812))
        #expect(near(WrkOutput.microseconds("1.25ms"), 1_250))
        #expect(near(WrkOutput.microseconds("10.00s"), 10_000_000))
        #expect(near(WrkOutput.microseconds("2.00m"), 120_000_000))
        #expect(near(WrkOutput.microseconds("1.00h"), 3_600_000_000))
        #expect(WrkOutput.microseconds("12.5k") == nil)
    }

    @Test func outputWithoutTheLatencyDistributionIsRefusedSayingToUseLatency() {
        let withoutDistribution = Self.notFound.split(separator: "\n").filter { !$0.contains("%") || $0.contains("Stdev") }
            .joined(separator: "\n")
        #expect {
            try WrkOutput(parsing: withoutDistribution)
        } throws: { error in
            "\(error)".contains("--latency")
        }
    }

    @Test func outputOfAFailedRunIsRefused() {
        #expect(throws: WrkOutput.ParseError.self) {
            try WrkOutput(parsing: "unable to connect to 127.0.0.1:1 Connection refused\n")
        }
    }

    /// Equal to a part in a billion (the values went through a decimal to binary conversion).
    func near(_ value: Double?, _ expected: Double) -> Bool {
        guard let value else { return false }
        return abs(value - expected) <= abs(expected) * 1e-9
    }
}
