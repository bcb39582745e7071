import Foundation

// Conversions that never trap. `Int(someDouble)` traps on NaN, on infinities and on anything
// out of range, and Foundation's `NSCondition.wait(until:)` traps on a date past 2262 (it
// converts to Int64 nanoseconds): one number from a settings file, a module or the network
// that slips past validation would otherwise take the whole supervisor down. Every Double
// that came from input goes through these on its way to an integer, a timer or a wait.

extension FixedWidthInteger {
    /// `value` rounded toward zero, or the nearest bound of this type when it is beyond it;
    /// NaN is 0. Unlike `Self(value)`, it never traps.
    @inlinable
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = Self.min
        } else if value >= Double(Self.max) {
            // Double(Self.max) rounds up to a power of two for 64-bit types, so anything
            // below it converts exactly.
            self = Self.max
        } else {
            self.init(value)
        }
    }
}

/// Spans of time given in seconds, made safe for timers and waits.
///
/// Every timer and wait in the runtime takes its span through here: NaN and negative spans
/// are 0, and spans longer than ``longest`` (infinity, `1e300`) are ``longest``, so that
/// converting them to milliseconds, nanoseconds, a `timespec` or a `Date` cannot overflow.
/// Settings are bounded far tighter by their schemas (a day for most timeouts); this is the
/// backstop for a value the schema missed.
public enum Saturating {
    /// The longest span honoured: 100 years. In nanoseconds (3.2e18) it fits an Int64, and
    /// now plus this is a date Foundation can still wait for.
    public static let longest: Double = 100 * 365.25 * 86_400

    /// `seconds` within `0...longest`; NaN is 0.
    @inlinable
    public static func seconds(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : Swift.min(Swift.max(seconds, 0), longest)
    }

    /// Whole milliseconds in `seconds` (clamped as ``seconds(_:)``), rounded up so that a
    /// wait never ends before its span.
    @inlinable
    public static func milliseconds(_ seconds: Double) -> Int {
        Int(saturating: (Self.seconds(seconds) * 1000).rounded(.up))
    }

    /// A `poll`/`epoll_wait` timeout for `seconds`, rounded up and at most `Int32.max`
    /// milliseconds (24.8 days); a caller that waits longer wakes early and waits again.
    @inlinable
    public static func pollTimeout(_ seconds: Double) -> Int32 {
        Int32(clamping: milliseconds(seconds))
    }

    /// Nanoseconds in `seconds` (clamped as ``seconds(_:)``), for `Task.sleep` and the like.
    @inlinable
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(saturating: (Self.seconds(seconds) * 1e9).rounded(.up))
    }
}

extension Date {
    /// Now plus `seconds`, clamped as ``Saturating/seconds(_:)``: never in the past, never
    /// further than ``Saturating/longest`` ahead.
    public init(saturatingSecondsFromNow seconds: Double) {
        self.init(timeIntervalSinceNow: Saturating.seconds(seconds))
    }

    /// This date plus `seconds` (negative spans move back), clamped to at most
    /// ``Saturating/longest`` from now: a date any wait can be given.
    public func addingSaturated(_ seconds: Double) -> Date {
        let sum = timeIntervalSinceReferenceDate + (seconds.isNaN ? 0 : seconds)
        let latest = Date.timeIntervalSinceReferenceDate + Saturating.longest
        return Date(timeIntervalSinceReferenceDate: Swift.min(sum.isNaN ? latest : sum, latest))
    }
}

extension NSCondition {
    /// Waits until signalled or `seconds` pass (clamped as ``Saturating/seconds(_:)``), with
    /// the lock held as for `wait(until:)`; returns whether it was signalled.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        wait(until: Date(saturatingSecondsFromNow: seconds))
    }

    /// `wait(until:)` for any date: one further than ``Saturating/longest`` from now (e.g.
    /// `Date.distantFuture`, past what Foundation can convert) waits that long at most.
    @discardableResult
    public func wait(untilSaturated deadline: Date) -> Bool {
        wait(until: Date().addingSaturated(deadline.timeIntervalSinceNow))
    }
}

extension Double {
    /// Short text for a number of seconds, bytes or a count in a message: `3`, `0.25`,
    /// `1e+300`, `inf`. Never traps (unlike `String(Int(value))`).
    public var compactText: String {
        isFinite && rounded() == self && Swift.abs(self) < 1e15 ? String(Int(self)) : String(self)
    }

    /// The number with `digits` decimals (0–6), as `String(format: "%.2f")` writes it but
    /// without Foundation's formatter (a tenth of a restart's turn in the supervisor's log
    /// lines): `0.25`, `-3.10`, rounded as the formatter rounds the exact value (to nearest,
    /// exact halves to even). Never traps: a value too large or not finite is written by the
    /// formatter.
    public func fixed(_ digits: Int) -> String {
        let digits = Swift.min(Swift.max(digits, 0), 6)
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let magnitude = Swift.abs(self)
        let product = magnitude * scale
        var scaled = product.rounded(.toNearestOrEven)
        // A product that rounded onto a half: the exact one lies on the side its rounding
        // error says (0.005 is a little above, and "%.2f" writes 0.01).
        if product - product.rounded(.down) == 0.5 {
            let error = (-product).addingProduct(magnitude, scale)
            if error > 0 { scaled = product.rounded(.up) } else if error < 0 { scaled = product.rounded(.down) }
        }
        guard isFinite, scaled < 1e15 else { return String(format: "%.\(digits)f", self) }
        let units = Int(scaled)
        let whole = units / Int(scale)
        var text = sign == .minus ? "-" : ""
        text += String(whole)
        guard digits > 0 else { return text }
        let fraction = String(units % Int(scale))
        text += "."
        text += String(repeating: "0", count: digits - fraction.count)
        text += fraction
        return text
    }
}
