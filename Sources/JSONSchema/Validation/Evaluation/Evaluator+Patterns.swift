extension Evaluator {
    /// Matches `pattern` against `string` within what is left of the validation's pattern
    /// budget; the first match to run out is remembered in `patternOverrun`.
    mutating func match(_ pattern: PatternRegex, _ string: String) -> PatternOutcome {
        let before = patternBudget.remaining
        let outcome = pattern.matches(string, budget: &patternBudget)
        // Most of the budget spent before this match: the values before it are the cause, not
        // this pattern (1,000 fair strings were told to simplify their pattern).
        if outcome == .overBudget { overrunOfASpentBudget = before < PatternBudget.perValidation / 2 }
        if outcome == .overBudget, patternOverrun == nil {
            // Quiet evaluation keeps no paths: the overrun is located at the root then, and
            // replaced by the located error when a collecting evaluation reports it.
            patternOverrun = ValidationError(
                instanceLocation: "", keywordLocation: "", keyword: "pattern",
                message: overBudgetMessage(pattern, string))
            patternOverrun?.isUndecided = true
        }
        return outcome
    }

    /// Reports a match that ran out of budget: the string is neither valid nor invalid, and
    /// the validation fails with a message that names the pattern and the bound.
    mutating func reportOverBudget(_ node: SchemaNode, _ keyword: String, _ pattern: PatternRegex, _ string: String, member: String? = nil) {
        guard collecting else { return }
        if let member { instancePath.append(.key(member)) }
        let before = errors.count
        let message = overBudgetMessage(pattern, string)
        report(node, keyword, message, keywordSuffix: member == nil ? [] : [.key(pattern.source)])
        if errors.count > before { errors[errors.count - 1].isUndecided = true }
        if member != nil { instancePath.removeLast() }
        if errors.count > before, patternOverrun?.instanceLocation == "" && patternOverrun?.keywordLocation == "", let located = errors.last {
            patternOverrun = located
        }
    }

    func overBudgetMessage(_ pattern: PatternRegex, _ string: String) -> String {
        let head = "the pattern \(pattern.source) could not be checked against \(ValueDescription.quoted(string)): "
        guard !overrunOfASpentBudget else {
            return head + "the values checked before it in this validation spent most of the bound of \(PatternBudget.perValidation) "
                + "steps that all its pattern matches share; send fewer or shorter values at once (or split them over several requests)"
        }
        return head + "matching it costs more than the bound of \(PatternBudget.perValidation) steps per validation; simplify the pattern "
            + "(nested quantifiers such as (a+)+ or (x+x+)+ are the usual cause) or send a shorter value"
    }
}
