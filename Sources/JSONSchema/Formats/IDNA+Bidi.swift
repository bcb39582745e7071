extension IDNA {
    /// The Bidi rule of RFC 5893 for a whole domain (given as U-labels). It only applies when
    /// some label contains right-to-left characters. Bidi classes are approximated by block.
    static func satisfiesBidiRule(_ labels: [String]) -> Bool {
        let classified = labels.map { $0.unicodeScalars.map(bidiClass) }
        guard classified.contains(where: { $0.contains { $0 == .r || $0 == .al || $0 == .an } }) else { return true }
        for label in classified {
            guard let first = label.first else { continue }
            let last = label.last(where: { $0 != .nsm }) ?? first
            switch first {
            case .r, .al:
                let allowed: Set<BidiClass> = [.r, .al, .an, .en, .es, .cs, .et, .on, .bn, .nsm]
                guard label.allSatisfy(allowed.contains), [.r, .al, .en, .an].contains(last) else { return false }
                if label.contains(.en) && label.contains(.an) { return false }
            case .l:
                let allowed: Set<BidiClass> = [.l, .en, .es, .cs, .et, .on, .bn, .nsm]
                guard label.allSatisfy(allowed.contains), last == .l || last == .en else { return false }
            default:
                return false
            }
        }
        return true
    }

    enum BidiClass: Hashable {
        case l, r, al, en, an, es, cs, et, on, bn, nsm
    }

    static func bidiClass(_ scalar: Unicode.Scalar) -> BidiClass {
        let v = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return .nsm
        default: break
        }
        switch v {
        case 0x30...0x39, 0x6F0...0x6F9, 0xB2, 0xB3, 0xB9: return .en
        case 0x660...0x669, 0x66B, 0x66C, 0x600...0x605: return .an
        case 0x2B, 0x2D: return .es
        case 0x2C, 0x2E, 0x2F, 0x3A, 0xA0: return .cs
        case 0x23...0x25, 0xA2...0xA5, 0xB0, 0xB1: return .et
        case 0x200B...0x200D: return .bn
        case 0x590...0x5FF, 0x7C0...0x89F, 0xFB1D...0xFB4F, 0x10800...0x10FFF, 0x1E800...0x1EDFF: return .r
        case 0x600...0x6FF, 0x700...0x7BF, 0x8A0...0x8FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF, 0x1EE00...0x1EEFF: return .al
        default: break
        }
        if scalar.properties.isAlphabetic || scalar.properties.generalCategory == .decimalNumber { return .l }
        return .on
    }
}
