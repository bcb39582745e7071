#if canImport(CPatternICU)
import CPatternICU

/// A pattern matched by ICU's backtracking engine with a step limit: for the patterns that
/// `PatternProgram` cannot match (backreferences, lookaround, Unicode property escapes,
/// programs over its size cap).
///
/// ICU is reached through its C API, as exported by Foundation's own ICU library, because
/// `NSRegularExpression` offers no step limit; ICU counts the limit in steps of its matcher,
/// not in time, so an answer never depends on the machine's load.
final class ICUPattern: Sendable {
    // Never mutated after init; each match runs on a clone (see `pattern_icu_find`).
    private nonisolated(unsafe) let regex: OpaquePointer
    /// Charged for a match that ends within its first tick, per input scalar and pattern
    /// scalar: an estimate of a non-pathological match's cost, at most one tick.
    private let patternLength: Int

    /// Compiles an ICU pattern; `nil` when ICU refuses it.
    init?(icuPattern: String, patternLength: Int) {
        let utf16 = Array(icuPattern.utf16)
        guard let regex = utf16.withUnsafeBufferPointer({ pattern_icu_open($0.baseAddress!, Int32($0.count)) }) else { return nil }
        self.regex = regex
        self.patternLength = patternLength
    }

    deinit {
        pattern_icu_close(regex)
    }

    /// Searches `string`, charging `budget` for the ICU ticks spent (and, for a match that
    /// spends none, an estimate); `.overBudget` when the budget runs out first.
    func matches(_ string: String, budget: inout PatternBudget) -> PatternOutcome {
        let ticks = budget.remaining / PatternBudget.icuTickCost
        guard ticks > 0 else { return .overBudget }
        let utf16 = Array(string.utf16)
        var used: Int32 = 0
        let found = utf16.withUnsafeBufferPointer { text in
            pattern_icu_find(regex, text.baseAddress, Int32(text.count), Int32(min(ticks, Int(Int32.max))), &used)
        }
        let estimate = min(PatternBudget.icuTickCost, (utf16.count + 1) * max(patternLength, 1))
        budget.remaining -= min(budget.remaining, Int(used) * PatternBudget.icuTickCost + estimate)
        switch found {
        case 1: return .match
        case 0: return .noMatch
        default: return .overBudget
        }
    }
}
#endif
