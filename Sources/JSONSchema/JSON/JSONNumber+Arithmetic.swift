extension JSONNumber {
    /// Whether `self` is an integral multiple of `divisor`, computed exactly in decimal so that
    /// `0.3` is a multiple of `0.1` and `1e308` a multiple of `0.5`.
    func isMultiple(of divisor: JSONNumber) -> Bool {
        if case .int(let a) = storage, case .int(let b) = divisor.storage, b > 0 {
            return a % b == 0
        }
        let a = decimal
        let b = divisor.decimal
        guard a.isFinite, b.isFinite, !b.isZero else {
            let q = doubleValue / divisor.doubleValue
            return q.isFinite && q == q.rounded()
        }
        if a.isZero { return true }
        if JSONDecimal.compareMagnitude(a, b) < 0 { return false }
        // Scale both to the smaller exponent: a = A × 10^m, b = B × 10^m with integral A, B.
        let m = min(a.exponent, b.exponent)
        guard let divisorMagnitude = JSONNumber.scaledMagnitude(b.digits, zeros: b.exponent - m) else {
            let q = a.double / b.double
            return q.isFinite && q == q.rounded()
        }
        var remainder: UInt64 = 0
        for d in a.digits {
            remainder = JSONNumber.mulMod(remainder, 10, divisorMagnitude)
            remainder = JSONNumber.addMod(remainder, UInt64(d), divisorMagnitude)
        }
        let zeros = a.exponent - m
        if zeros > 0 {
            remainder = JSONNumber.mulMod(remainder, JSONNumber.powMod(10, zeros, divisorMagnitude), divisorMagnitude)
        }
        return remainder == 0
    }

    /// `digits × 10^zeros` as a `UInt64`, or `nil` when it does not fit.
    private static func scaledMagnitude(_ digits: [UInt8], zeros: Int) -> UInt64? {
        var value: UInt64 = 0
        for d in digits {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            value = s
        }
        guard zeros < 20 else { return nil }
        for _ in 0..<zeros {
            let (m, o) = value.multipliedReportingOverflow(by: 10)
            if o { return nil }
            value = m
        }
        return value
    }

    private static func mulMod(_ x: UInt64, _ y: UInt64, _ modulus: UInt64) -> UInt64 {
        let product = x.multipliedFullWidth(by: y)
        return modulus.dividingFullWidth((product.high, product.low)).remainder
    }

    private static func addMod(_ x: UInt64, _ y: UInt64, _ modulus: UInt64) -> UInt64 {
        let (sum, overflow) = x.addingReportingOverflow(y % modulus)
        if overflow { return sum &- modulus }
        return sum % modulus
    }

    private static func powMod(_ base: UInt64, _ exponent: Int, _ modulus: UInt64) -> UInt64 {
        var result: UInt64 = 1 % modulus
        var b = base % modulus
        var e = exponent
        while e > 0 {
            if e & 1 == 1 { result = mulMod(result, b, modulus) }
            b = mulMod(b, b, modulus)
            e >>= 1
        }
        return result
    }
}
