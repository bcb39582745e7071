@testable import AgentBase
import AgentCore
@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The saturating conversions at their edges: NaN, infinities, `1e400` as the JSON parser
/// reads it, 2^31 ms, values next to the bounds of each integer type.
@Suite(.ownThreads) struct SaturatingTests {
    /// `1e400` the way a settings file hands it over: the parser keeps it exactly and its
    /// Double is infinite.
    static let parsedHuge = (try? JSONValue.parse(Data("1e400".utf8)))?.numberValue?.doubleValue ?? 0

    @Test func integersFromDoublesClampInsteadOfTrapping() {
        #expect(Self.parsedHuge == .infinity)
        #expect(Int(saturating: .nan) == 0)
        #expect(Int(saturating: .infinity) == .max)
        #expect(Int(saturating: -.infinity) == .min)
        #expect(Int(saturating: Self.parsedHuge) == .max)
        #expect(Int(saturating: 1e300) == .max)
        #expect(Int(saturating: Double(Int.max)) == .max)
        #expect(Int(saturating: -Double(Int.max)) == .min)
        #expect(Int(saturating: 9_007_199_254_740_993.0) == 9_007_199_254_740_992)
        #expect(Int(saturating: -2.9) == -2)
        #expect(Int32(saturating: 2_147_483_648.0) == .max)
        #expect(Int32(saturating: 2_147_483_647.0) == .max)
        #expect(Int32(saturating: 2_147_483_646.9) == 2_147_483_646)
        #expect(Int32(saturating: -3e9) == .min)
        #expect(Int64(saturating: 1e19) == .max)
        #expect(UInt64(saturating: -1) == 0)
        #expect(UInt64(saturating: 1e20) == .max)
        #expect(UInt64(saturating: 18_446_744_073_709_549_568.0) == 18_446_744_073_709_549_568)
        #expect(UInt32(saturating: .nan) == 0)
        #expect(UInt8(saturating: 255.9) == 255 && UInt8(saturating: 256) == 255)
    }

    @Test func spansAreClampedToZeroAndAHundredYears() {
        #expect(Saturating.seconds(.nan) == 0)
        #expect(Saturating.seconds(-5) == 0)
        #expect(Saturating.seconds(2.5) == 2.5)
        #expect(Saturating.seconds(.infinity) == Saturating.longest)
        #expect(Saturating.seconds(1e300) == Saturating.longest)
        #expect(Saturating.milliseconds(0.0001) == 1, "rounded up: a wait never ends before its span")
        #expect(Saturating.milliseconds(3_000_000) == 3_000_000_000)
        #expect(Saturating.milliseconds(Self.parsedHuge) == Int(Saturating.longest * 1000))
        #expect(Saturating.nanoseconds(Self.parsedHuge) == UInt64(Saturating.longest * 1e9))
        #expect(Saturating.nanoseconds(.nan) == 0)
        #expect(Saturating.nanoseconds(1.5) == 1_500_000_000)
    }

    @Test func pollTimeoutsStopAtInt32MaxMilliseconds() {
        // 2^31 ms, the epoll timeout that trapped: 2,147,483.648 s.
        #expect(Saturating.pollTimeout(2_147_483.648) == .max)
        #expect(Saturating.pollTimeout(3_000_000) == .max)
        #expect(Saturating.pollTimeout(Double(Int.max)) == .max)
        #expect(Saturating.pollTimeout(.infinity) == .max)
        #expect(Saturating.pollTimeout(.nan) == 0)
        #expect(Saturating.pollTimeout(-1) == 0)
        #expect(Saturating.pollTimeout(0.0101) == 11)
    }

    @Test func datesStayWithinWhatFoundationCanWaitFor() {
        let now = Date()
        let far = Date(saturatingSecondsFromNow: 1e12)
        #expect(far.timeIntervalSince(now) <= Saturating.longest + 1)
        #expect(far.timeIntervalSince(now) > Saturating.longest - 60)
        #expect(Date(saturatingSecondsFromNow: .nan).timeIntervalSince(now) < 60)
        #expect(Date.distantFuture.addingSaturated(1).timeIntervalSinceNow <= Saturating.longest + 1)
        #expect(now.addingSaturated(-10).timeIntervalSince(now) == -10)
        #expect(now.addingSaturated(.nan) == now)
        // Foundation converts the date to Int64 nanoseconds since 1970: it fits.
        #expect(far.timeIntervalSince1970 * 1e9 < Double(Int64.max))
    }

    @Test func conditionWaitsForHugeSpansAndDatesDoNotTrap() {
        let condition = NSCondition()
        condition.lock()
        defer { condition.unlock() }
        // Each would trap in Foundation's conversion to a timespec; signalled at once here
        // by a thread, they return.
        for span in [1e12, Self.parsedHuge, Double(Int.max)] {
            let waker = Thread {
                usleep(20_000)
                condition.lock()
                condition.broadcast()
                condition.unlock()
            }
            waker.start()
            #expect(condition.wait(seconds: span))
        }
        #expect(!condition.wait(seconds: .nan))
        #expect(!condition.wait(seconds: -1))
        let waker = Thread {
            usleep(20_000)
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
        waker.start()
        #expect(condition.wait(untilSaturated: .distantFuture))
    }

    @Test func compactTextNeverTraps() {
        #expect(3.0.compactText == "3")
        #expect(0.25.compactText == "0.25")
        #expect(1e300.compactText == "1e+300")
        #expect(Double.infinity.compactText == "inf")
        #expect(Double.nan.compactText == "nan")
    }

    /// `fixed` writes what `String(format:)` writes, exact halves and negative zeros included,
    /// and never traps.
    @Test func fixedDecimalsMatchTheFormatterAndNeverTrap() {
        let values: [Double] = [0, 0.004, 0.006, 0.1, 0.25, 1.999, 2.5001, 3.14159, 12.3456, 999.996, 1234567.891,
                                -0.004, -0.006, -0.25, -7.891, 1e-9, 86400.5001, 0.125, 0.375, 2.5, -0.0]
        for value in values {
            for digits in 0...3 {
                #expect(value.fixed(digits) == String(format: "%.\(digits)f", value), "\(value) with \(digits) digits")
            }
        }
        // Every millisecond and every half-millisecond up to 20 s (halves among them, and
        // products that round onto a half, like 0.005 × 100).
        var mismatches: [String] = []
        for step in 0...40_000 {
            let value = Double(step) / 2000
            for digits in 1...3 where value.fixed(digits) != String(format: "%.\(digits)f", value) {
                mismatches.append("\(value) with \(digits) digits: \(value.fixed(digits))")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(0.005.fixed(2) == "0.01" && 1.005.fixed(2) == "1.00" && 2.675.fixed(2) == "2.67" && 0.125.fixed(2) == "0.12")
        #expect(1e300.fixed(2) == String(format: "%.2f", 1e300))
        #expect(Double.infinity.fixed(2) == "inf")
        #expect(Double.nan.fixed(1) == "nan")
        #expect((-Double.infinity).fixed(1) == "-inf")
        #expect(Double.greatestFiniteMagnitude.fixed(6).hasPrefix("17976931348623157"))
        #expect(3.5.fixed(-1) == "4" && 2.5.fixed(9) == "2.500000")
    }
}

/// The supervisor's loop and policy take any span: a value the schema missed cannot trap.
@Suite(.ownThreads) struct TimerSaturationTests {
    @Test func loopWithHugeTimersWaitsWithoutTrappingAndRunsOnlyDueOnes() {
        let loop = EventLoop()
        loop.isolated {
            var fired: [String] = []
            // 3e6 s is more than 2^31 ms: the epoll timeout that trapped for `stop_timeout: 3000000`.
            for (name, span) in [("3e6", 3e6), ("inf", SaturatingTests.parsedHuge), ("1e300", 1e300), ("max", Double(Int.max))] {
                loop.schedule(after: span) { fired.append(name) }
            }
            loop.schedule(after: .nan) { fired.append("nan") }
            loop.schedule(after: -1) { fired.append("negative") }
            loop.schedule(after: 0.02) { fired.append("soon") }
            let start = EventLoop.now()
            while !fired.contains("soon"), EventLoop.now() - start < 10 { loop.runOnce() }
            #expect(fired.sorted() == ["nan", "negative", "soon"])
            // With only the huge timers left, a turn waits on them (capped here by maxWait).
            loop.runOnce(maxWait: 0.01)
            #expect(fired.count == 3)
        }
    }

    @Test func loopWaitBoundedByAnInfiniteMaxWaitDoesNotTrap() {
        let loop = EventLoop()
        loop.isolated {
            loop.schedule(after: 0.01) {}
            // maxWait is capped at an hour; the timer ends the wait.
            loop.runOnce(maxWait: SaturatingTests.parsedHuge)
            loop.runOnce(maxWait: .nan)
        }
    }

    @Test func policyFromHugeNumbersIsClampedAndItsMessagesDoNotTrap() throws {
        // Read straight from JSON, past the host schema (which refuses all of these).
        let object = try #require(try JSONValue.parse(Data("""
        {"restart": {"initial_delay": 1e400, "max_delay": 1e400, "multiplier": 1e400, "reset_after": 1e300,
                     "within": 1e300, "max_restarts": 1e23},
         "stop_timeout": 3000000e300, "start_timeout": 1e400, "watchdog": 1e400, "queue": {"limit_bytes": 1e30}}
        """.utf8)).objectValue)
        let policy = ProcessPolicy(object)
        #expect(policy.initialDelay == Saturating.longest)
        #expect(policy.maximumDelay == Saturating.longest)
        #expect(policy.multiplier == SettingsBounds.largestMultiplier)
        #expect(policy.within == Saturating.longest)
        #expect(policy.stopTimeout == Saturating.longest)
        #expect(policy.startTimeout == Saturating.longest)
        #expect(policy.watchdog == Saturating.longest)
        #expect(policy.maximumRestarts == Int.max, "1e23 saturates; it does not silently become the default 5")
        #expect(policy.queueLimit == SettingsBounds.largestQueueBytes)
        #expect(policy.delay(afterFailuresInARow: 1000) == Saturating.longest)
        #expect(ProcessPolicy.format(1e300) == "1e+300")
        #expect(Saturating.milliseconds(policy.watchdog ?? 0) > 0)
    }

    @Test func policySetDirectlyToInfinityStillGivesFiniteDelays() {
        var policy = ProcessPolicy()
        policy.initialDelay = 0
        policy.multiplier = .infinity
        #expect(policy.delay(afterFailuresInARow: 5) == 0, "0 × ∞ is not NaN here")
        policy.initialDelay = .infinity
        policy.maximumDelay = .infinity
        #expect(policy.delay(afterFailuresInARow: 2) == Saturating.longest)
        policy.initialDelay = .nan
        policy.maximumDelay = 30
        #expect(policy.delay(afterFailuresInARow: 1) == 0)
    }
}
