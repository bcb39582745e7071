/// What matching patterns may still cost during one validation, in steps: one step is one
/// NFA instruction visited by `PatternProgram`, and ICU's backtracking engine (for patterns
/// with backreferences or lookaround) is charged `icuTickCost` per tick of its own counter.
///
/// The budget is per validation, not per match, so 1,000 strings each near a per-match limit
/// cannot add up: once it is spent, every further match fails as `.overBudget`.
struct PatternBudget: Sendable {
    /// Steps one validation may spend matching patterns: a few milliseconds of matching on a
    /// loaded machine (see `agent-bench patterns`), far more than any sane pattern needs on
    /// inputs of sane size (a 100-instruction program on a 5,000-character string).
    static let perValidation = 500_000

    /// What one tick of ICU's counter (10,000 steps of its backtracking matcher) costs here:
    /// measured, a tick takes about as long as 30,000 steps of `PatternProgram`.
    static let icuTickCost = 30_000

    /// Steps left.
    var remaining: Int

    /// A full budget.
    init(remaining: Int = PatternBudget.perValidation) {
        self.remaining = remaining
    }
}

/// The answer of one match.
enum PatternOutcome: Sendable, Equatable {
    /// The pattern matches somewhere in the string.
    case match
    /// The pattern matches nowhere in the string.
    case noMatch
    /// Matching would cost more than the budget left; the answer is unknown.
    case overBudget
}
