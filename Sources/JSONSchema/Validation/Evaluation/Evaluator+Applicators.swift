extension Evaluator {
    /// `$ref`, `$dynamicRef`, `allOf`, `anyOf`, `oneOf`, `not` and `if`/`then`/`else`: the
    /// keywords that apply subschemas to the same instance.
    mutating func evaluateInPlace(_ node: SchemaNode, _ instance: JSONValue, _ local: inout Annotations, _ want: Bool) -> Bool {
        var valid = true
        if let target = node.ref {
            pushKeyword("$ref")
            let ok = evaluate(target, instance, &local, want)
            popKeyword()
            if !ok {
                if !collecting { return false }
                valid = false
            }
        }
        if let dynamic = node.dynamicRef {
            var target = dynamic.target
            if let anchor = dynamic.dynamicAnchor {
                // The outermost resource in the dynamic scope that declares the anchor wins.
                for resource in scope {
                    if let found = resource.dynamicAnchors[anchor] {
                        target = found
                        break
                    }
                }
            }
            pushKeyword("$dynamicRef")
            let ok = evaluate(target, instance, &local, want)
            popKeyword()
            if !ok {
                if !collecting { return false }
                valid = false
            }
        }
        for (i, subschema) in node.allOf.enumerated() {
            pushKeyword("allOf", i)
            let ok = evaluate(subschema, instance, &local, want)
            popKeyword(2)
            if !ok {
                if !collecting { return false }
                valid = false
            }
        }
        if !node.anyOf.isEmpty, !evaluateAnyOf(node, instance, &local, want) {
            if !collecting { return false }
            valid = false
        }
        if !node.oneOf.isEmpty, !evaluateOneOf(node, instance, &local, want) {
            if !collecting { return false }
            valid = false
        }
        if let negated = node.not {
            var scratch = Annotations()
            if probe(negated, instance, &scratch, false) {
                report(node, "not", "expected anything but \(Evaluator.describe(negated) ?? "a value matching the \"not\" schema"), found \(ValueDescription.withType(instance))")
                if !collecting { return false }
                valid = false
            }
        }
        if let conditional = node.conditional, !evaluateConditional(conditional, instance, &local, want) {
            if !collecting { return false }
            valid = false
        }
        return valid
    }

    private mutating func evaluateAnyOf(_ node: SchemaNode, _ instance: JSONValue, _ local: inout Annotations, _ want: Bool) -> Bool {
        var matched = false
        for subschema in node.anyOf {
            var branch = Annotations()
            if probe(subschema, instance, &branch, want) {
                matched = true
                // Annotations from every matching branch count, so keep looking only if wanted.
                guard want else { break }
                local.formUnion(branch)
            }
        }
        if !matched && collecting {
            reportNoBranchMatched(node, "anyOf", node.anyOf, instance)
        }
        return matched
    }

    private mutating func evaluateOneOf(_ node: SchemaNode, _ instance: JSONValue, _ local: inout Annotations, _ want: Bool) -> Bool {
        var matches: [Int] = []
        var chosen = Annotations()
        for (i, subschema) in node.oneOf.enumerated() {
            var branch = Annotations()
            if probe(subschema, instance, &branch, want) {
                matches.append(i)
                if matches.count == 1 {
                    chosen = branch
                } else if !collecting {
                    return false
                }
            }
        }
        switch matches.count {
        case 1:
            if want { local.formUnion(chosen) }
            return true
        case 0:
            if collecting { reportNoBranchMatched(node, "oneOf", node.oneOf, instance) }
            return false
        default:
            let listed = matches.count == 2 ? "\(matches[0]) and \(matches[1])" : matches.map(String.init).joined(separator: ", ")
            report(node, "oneOf", "matched \(matches.count) of the oneOf schemas (\(listed)); expected exactly one")
            return false
        }
    }

    private mutating func evaluateConditional(_ conditional: Conditional, _ instance: JSONValue, _ local: inout Annotations, _ want: Bool) -> Bool {
        var conditionAnnotations = Annotations()
        if probe(conditional.condition, instance, &conditionAnnotations, want) {
            if want { local.formUnion(conditionAnnotations) }
            guard let then = conditional.then else { return true }
            pushKeyword("then")
            defer { popKeyword() }
            return evaluate(then, instance, &local, want)
        }
        guard let otherwise = conditional.otherwise else { return true }
        pushKeyword("else")
        defer { popKeyword() }
        return evaluate(otherwise, instance, &local, want)
    }

    /// Explains an `anyOf`/`oneOf` without any matching branch. When every branch failed only
    /// on the value itself (`type`, `const`, `enum`), one merged message lists the
    /// alternatives; otherwise a summary is followed by the errors of the closest branch.
    private mutating func reportNoBranchMatched(_ node: SchemaNode, _ keyword: String, _ branches: [SchemaNode], _ instance: JSONValue) {
        let here = PathToken.pointer(instancePath)
        var explained: [(errors: [ValidationError], expectations: [String?])] = []
        for (i, branch) in branches.enumerated() {
            pushKeyword(keyword, i)
            explained.append(explain(branch, instance))
            popKeyword(2)
        }
        let simple = explained.allSatisfy { result in
            result.errors.count == 1 && result.errors[0].instanceLocation == here && result.expectations[0] != nil
        }
        if simple {
            var alternatives: [String] = []
            for result in explained {
                let expected = result.expectations[0]!
                if !alternatives.contains(expected) { alternatives.append(expected) }
            }
            var message = "expected \(alternatives.joined(separator: " or ")), found \(ValueDescription.withType(instance))"
            if case .string(let text) = instance {
                let candidates = branches.compactMap { constantStrings(of: $0) }.flatMap { $0 }
                if let suggestion = Suggestions.closest(to: text, among: candidates) {
                    message += "; did you mean \(ValueDescription.quoted(suggestion))?"
                }
            }
            report(node, keyword, message)
            return
        }
        // Closest: no type mismatch at this location first, then the fewest errors.
        var best = 0
        var bestScore = (Int.max, Int.max)
        for (i, result) in explained.enumerated() {
            let typeMismatch = result.errors.contains { $0.instanceLocation == here && $0.keyword == "type" } ? 1 : 0
            let score = (typeMismatch, result.errors.count)
            if score < bestScore {
                best = i
                bestScore = score
            }
        }
        let requirement = keyword == "oneOf" ? "exactly one" : "at least one"
        report(node, keyword, "expected a value matching \(requirement) of the \(branches.count) \(keyword) schemas, but none matched; errors of the closest, \(keyword)/\(best), follow")
        append(explained[best])
    }

    /// The string values a branch accepts when it is just a `const` or an `enum`.
    private func constantStrings(of node: SchemaNode) -> [String]? {
        if case .string(let s)? = node.constant { return [s] }
        if let values = node.enumeration?.values {
            return values.compactMap(\.stringValue)
        }
        if let target = node.ref { return target.constant?.stringValue.map { [$0] } }
        return nil
    }

    /// A short noun phrase for schemas that only constrain type, `const` or `enum`
    /// (`a string`, `"always"`, `one of "a", "b"`), used by `not`.
    static func describe(_ node: SchemaNode) -> String? {
        if node.booleanValue == true { return "any value" }
        if let constant = node.constant { return ValueDescription.compact(constant) }
        if let values = node.enumeration?.values { return "one of \(ValueDescription.list(values))" }
        if let types = node.types { return ValueDescription.describe(types) }
        return nil
    }

    /// `a number ≥ 0.1`: the type phrase, plus numeric bounds when only numbers are allowed.
    static func typeExpectation(_ node: SchemaNode, _ types: JSONTypeSet) -> String {
        var text = ValueDescription.describe(types)
        if types.isSubset(of: [.number, .integer]), let numbers = node.numbers {
            let bounds = boundsDescription(numbers)
            if !bounds.isEmpty { text += " " + bounds }
        }
        return text
    }

    /// `≥ 1 and < 10`, `a multiple of 5`.
    static func boundsDescription(_ numbers: NumberConstraints) -> String {
        var parts: [String] = []
        if let v = numbers.minimum { parts.append("≥ \(v)") }
        if let v = numbers.exclusiveMinimum { parts.append("> \(v)") }
        if let v = numbers.maximum { parts.append("≤ \(v)") }
        if let v = numbers.exclusiveMaximum { parts.append("< \(v)") }
        if let v = numbers.multipleOf { parts.append("that is a multiple of \(v)") }
        return parts.joined(separator: " and ")
    }

    mutating func reportConstMismatch(_ node: SchemaNode, _ constant: JSONValue, _ instance: JSONValue) {
        guard collecting else { return }
        let expected = ValueDescription.compact(constant)
        report(node, "const", "expected \(expected), found \(ValueDescription.withType(instance))", expectation: expected)
    }

    mutating func reportEnumMismatch(_ node: SchemaNode, _ values: [JSONValue], _ instance: JSONValue) {
        guard collecting else { return }
        let expected = values.count == 1 ? ValueDescription.compact(values[0]) : "one of \(ValueDescription.list(values))"
        var message = "expected \(expected), found \(ValueDescription.withType(instance))"
        if case .string(let text) = instance,
            let suggestion = Suggestions.closest(to: text, among: values.compactMap(\.stringValue))
        {
            message += "; did you mean \(ValueDescription.quoted(suggestion))?"
        }
        report(node, "enum", message, expectation: expected)
    }
}
