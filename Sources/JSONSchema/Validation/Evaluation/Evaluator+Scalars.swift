extension Evaluator {
    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
    mutating func evaluateNumber(_ node: SchemaNode, _ numbers: NumberConstraints, _ number: JSONNumber) -> Bool {
        var valid = true
        let noun = node.types == .integer ? "an integer" : "a number"
        if let minimum = numbers.minimum, let order = number.compare(to: minimum), order < 0 {
            valid = false
            report(node, "minimum", "expected \(noun) ≥ \(minimum), found \(number)")
            if !collecting { return false }
        }
        if let limit = numbers.exclusiveMinimum, let order = number.compare(to: limit), order <= 0 {
            valid = false
            report(node, "exclusiveMinimum", "expected \(noun) > \(limit), found \(number)")
            if !collecting { return false }
        }
        if let maximum = numbers.maximum, let order = number.compare(to: maximum), order > 0 {
            valid = false
            report(node, "maximum", "expected \(noun) ≤ \(maximum), found \(number)")
            if !collecting { return false }
        }
        if let limit = numbers.exclusiveMaximum, let order = number.compare(to: limit), order >= 0 {
            valid = false
            report(node, "exclusiveMaximum", "expected \(noun) < \(limit), found \(number)")
            if !collecting { return false }
        }
        if let divisor = numbers.multipleOf, !number.isMultiple(of: divisor) {
            valid = false
            report(node, "multipleOf", "expected a multiple of \(divisor), found \(number)")
        }
        return valid
    }

    /// `minLength`, `maxLength` (in Unicode code points), `pattern` and asserted `format`.
    mutating func evaluateString(_ node: SchemaNode, _ string: String) -> Bool {
        var valid = true
        if let strings = node.strings {
            if strings.minLength != nil || strings.maxLength != nil {
                let length = string.unicodeScalars.count
                if let minimum = strings.minLength, length < minimum {
                    valid = false
                    report(node, "minLength", "expected a string of at least \(ValueDescription.count(minimum, "character")), found \(ValueDescription.quoted(string)) (\(ValueDescription.count(length, "character")))")
                    if !collecting { return false }
                }
                if let maximum = strings.maxLength, length > maximum {
                    valid = false
                    report(node, "maxLength", "expected a string of at most \(ValueDescription.count(maximum, "character")), found \(ValueDescription.quoted(string)) (\(ValueDescription.count(length, "character")))")
                    if !collecting { return false }
                }
            }
            if let pattern = strings.pattern {
                switch match(pattern, string) {
                case .match:
                    break
                case .noMatch:
                    valid = false
                    report(node, "pattern", "expected a string matching \(pattern.source), found \(ValueDescription.quoted(string))")
                    if !collecting { return false }
                case .overBudget:
                    valid = false
                    reportOverBudget(node, "pattern", pattern, string)
                    if !collecting { return false }
                }
            }
        }
        if let format = node.format, format.assert, !format.check(string) {
            valid = false
            report(node, "format", "expected \(FormatCheckers.noun(for: format.name)), found \(ValueDescription.quoted(string))")
        }
        return valid
    }
}
