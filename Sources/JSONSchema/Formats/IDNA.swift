/// IDNA2008 (RFC 5891/5892) checks for U-labels: the derived property of each code point
/// (approximated from its general category), the exception table, and the CONTEXTJ/CONTEXTO
/// rules. Scripts and joining types are approximated by code point blocks, since the
/// standard library exposes neither.
enum IDNA {
    static func isValidULabel(_ label: String) -> Bool {
        let scalars = Array(label.unicodeScalars)
        guard let first = scalars.first, scalars.count <= 63 else { return false }
        if scalars.count >= 4, scalars[2] == "-", scalars[3] == "-" { return false }
        if first == "-" || scalars.last == "-" { return false }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: break
        }
        for (i, scalar) in scalars.enumerated() {
            switch status(of: scalar) {
            case .valid: continue
            case .disallowed: return false
            case .contextual:
                guard contextRuleHolds(scalars, at: i) else { return false }
            }
        }
        return true
    }

    private enum Status {
        case valid, disallowed, contextual
    }

    private static func status(of scalar: Unicode.Scalar) -> Status {
        let v = scalar.value
        switch v {
        case 0xDF, 0x3C2, 0x6FD, 0x6FE, 0xF0B, 0x3007: return .valid
        case 0x640, 0x7FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B: return .disallowed
        case 0xB7, 0x375, 0x5F3, 0x5F4, 0x30FB, 0x660...0x669, 0x6F0...0x6F9, 0x200C, 0x200D: return .contextual
        default: break
        }
        if v < 0x80 {
            let lowercaseLetter = v >= 0x61 && v <= 0x7A
            let digit = v >= 0x30 && v <= 0x39
            return lowercaseLetter || digit || v == 0x2D ? .valid : .disallowed
        }
        if scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.changesWhenCaseFolded {
            return .disallowed
        }
        switch scalar.properties.generalCategory {
        case .lowercaseLetter, .otherLetter, .decimalNumber, .modifierLetter, .nonspacingMark, .spacingMark:
            return .valid
        default:
            return .disallowed
        }
    }

    private static func contextRuleHolds(_ s: [Unicode.Scalar], at i: Int) -> Bool {
        let before: Unicode.Scalar? = i > 0 ? s[i - 1] : nil
        let after: Unicode.Scalar? = i + 1 < s.count ? s[i + 1] : nil
        switch s[i].value {
        case 0x200D:
            return before.map(isVirama) ?? false
        case 0x200C:
            if let before, isVirama(before) { return true }
            return zeroWidthNonJoinerContext(s, at: i)
        case 0xB7:
            return before == "l" && after == "l"
        case 0x375:
            return after.map(isGreek) ?? false
        case 0x5F3, 0x5F4:
            return before.map(isHebrew) ?? false
        case 0x30FB:
            return s.contains { $0 != "\u{30FB}" && isHiraganaKatakanaOrHan($0) }
        case 0x660...0x669:
            return !s.contains { (0x6F0...0x6F9).contains($0.value) }
        case 0x6F0...0x6F9:
            return !s.contains { (0x660...0x669).contains($0.value) }
        default:
            return false
        }
    }

    private static func isVirama(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.canonicalCombiningClass.rawValue == 9
    }

    /// `(L|D) T* ZWNJ T* (R|D)` over joining types (RFC 5892 appendix A.1).
    private static func zeroWidthNonJoinerContext(_ s: [Unicode.Scalar], at i: Int) -> Bool {
        var j = i - 1
        while j >= 0, joiningType(s[j]) == .transparent { j -= 1 }
        guard j >= 0, [.left, .dual].contains(joiningType(s[j])) else { return false }
        var k = i + 1
        while k < s.count, joiningType(s[k]) == .transparent { k += 1 }
        guard k < s.count, [.right, .dual].contains(joiningType(s[k])) else { return false }
        return true
    }

    private enum JoiningType {
        case none, left, right, dual, transparent
    }

    private static let rightJoining: [ClosedRange<UInt32>] = [
        0x622...0x625, 0x627...0x627, 0x629...0x629, 0x62F...0x632, 0x648...0x648, 0x671...0x673,
        0x675...0x677, 0x688...0x699, 0x6C0...0x6C0, 0x6C3...0x6CB, 0x6CD...0x6CD, 0x6CF...0x6CF,
        0x6D2...0x6D3, 0x6D5...0x6D5, 0x6EE...0x6EF, 0x710...0x710, 0x715...0x719, 0x71E...0x71E,
        0x728...0x728, 0x72A...0x72A, 0x72C...0x72C, 0x72F...0x72F, 0x74D...0x74D, 0x759...0x75B,
        0x76B...0x76C, 0x771...0x771, 0x773...0x774, 0x778...0x779,
    ]

    private static func joiningType(_ scalar: Unicode.Scalar) -> JoiningType {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return .transparent
        default: break
        }
        let v = scalar.value
        if rightJoining.contains(where: { $0.contains(v) }) { return .right }
        let joiningBlocks: [ClosedRange<UInt32>] = [0x620...0x64A, 0x66E...0x6FF, 0x712...0x74F, 0x750...0x77F, 0x7CA...0x7EA, 0x8A0...0x8C9]
        if joiningBlocks.contains(where: { $0.contains(v) }), scalar.properties.generalCategory == .otherLetter {
            return .dual
        }
        return .none
    }

    private static func isGreek(_ scalar: Unicode.Scalar) -> Bool {
        (0x370...0x3FF).contains(scalar.value) || (0x1F00...0x1FFF).contains(scalar.value)
    }

    private static func isHebrew(_ scalar: Unicode.Scalar) -> Bool {
        (0x591...0x5F4).contains(scalar.value) || (0xFB1D...0xFB4F).contains(scalar.value)
    }

    private static func isHiraganaKatakanaOrHan(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        let ranges: [ClosedRange<UInt32>] = [
            0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F, 0x2E80...0x2FDF, 0x3005...0x3007,
            0x3021...0x3029, 0x3038...0x303B, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3134F,
        ]
        return ranges.contains { $0.contains(v) }
    }
}
