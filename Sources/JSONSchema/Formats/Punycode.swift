/// RFC 3492 Punycode, used to check IDNA A-labels (`xn--…`) in host names.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 128

    /// Decodes the part of an A-label after `xn--`; `nil` when it is not valid Punycode.
    static func decode(_ input: String) -> String? {
        let bytes = Array(input.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        var output: [UInt32] = []
        var position = 0
        if let lastHyphen = bytes.lastIndex(of: UInt8(ascii: "-")) {
            output = bytes[..<lastHyphen].map(UInt32.init)
            position = lastHyphen + 1
        }
        var n = initialN
        var i = 0
        var bias = initialBias
        while position < bytes.count {
            let oldI = i
            var w = 1
            var k = base
            while true {
                guard position < bytes.count, let digit = digitValue(bytes[position]) else { return nil }
                position += 1
                let (product, overflow1) = digit.multipliedReportingOverflow(by: w)
                let (sum, overflow2) = i.addingReportingOverflow(product)
                guard !overflow1, !overflow2 else { return nil }
                i = sum
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                let (nextW, overflow3) = w.multipliedReportingOverflow(by: base - t)
                guard !overflow3 else { return nil }
                w = nextW
                k += base
            }
            let count = output.count + 1
            bias = adapt(i - oldI, count, oldI == 0)
            n += i / count
            i %= count
            guard n <= 0x10FFFF, Unicode.Scalar(UInt32(n)) != nil else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        var result = ""
        for value in output {
            guard let scalar = Unicode.Scalar(value) else { return nil }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// Encodes a label to Punycode (without the `xn--` prefix).
    static func encode(_ input: String) -> String? {
        let scalars = input.unicodeScalars.map { Int($0.value) }
        var output = scalars.filter { $0 < 0x80 }.map { Character(Unicode.Scalar(UInt8($0))) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < scalars.count {
            guard let m = scalars.filter({ $0 >= n }).min() else { return nil }
            delta += (m - n) * (handled + 1)
            n = m
            for c in scalars {
                if c < n { delta += 1 }
                if c == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digitCharacter(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digitCharacter(q))
                    bias = adapt(delta, handled + 1, handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    private static func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
        var d = first ? delta / damp : delta / 2
        d += d / count
        var k = 0
        while d > ((base - tMin) * tMax) / 2 {
            d /= base - tMin
            k += base
        }
        return k + ((base - tMin + 1) * d) / (d + skew)
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0")) + 26
        default: return nil
        }
    }

    private static func digitCharacter(_ value: Int) -> Character {
        value < 26 ? Character(Unicode.Scalar(UInt8(97 + value))) : Character(Unicode.Scalar(UInt8(22 + value)))
    }
}
