extension Evaluator {
    /// Array keywords except `unevaluatedItems`, which must wait for all annotations.
    mutating func evaluateArray(
        _ node: SchemaNode, _ group: ArrayConstraints, _ elements: [JSONValue], _ local: inout Annotations, _ want: Bool
    ) -> Bool {
        var valid = true
        if let minimum = group.minItems, elements.count < minimum {
            valid = false
            report(node, "minItems", "expected an array with at least \(ValueDescription.count(minimum, "item")), found \(ValueDescription.count(elements.count, "item"))")
            if !collecting { return false }
        }
        if let maximum = group.maxItems, elements.count > maximum {
            valid = false
            report(node, "maxItems", "expected an array with at most \(ValueDescription.count(maximum, "item")), found \(ValueDescription.count(elements.count, "item"))")
            if !collecting { return false }
        }
        if group.uniqueItems, let (first, second) = firstDuplicate(elements) {
            valid = false
            report(node, "uniqueItems", "expected unique items, but items \(first) and \(second) are equal (\(ValueDescription.compact(elements[first])))")
            if !collecting { return false }
        }
        let prefixCount = min(group.prefixItems.count, elements.count)
        for i in 0..<prefixCount {
            let ok = evaluateChild(group.prefixItems[i], elements[i], .index(i), group.prefixItemsKeyword, .index(i))
            if !ok {
                if !collecting { return false }
                valid = false
            }
        }
        if want { local.items.insert(upTo: prefixCount) }
        if let items = group.items, elements.count > group.prefixItems.count {
            if items.booleanValue == false {
                valid = false
                let allowed = group.prefixItems.count
                report(node, group.itemsKeyword, allowed == 0
                    ? "expected an empty array, found \(ValueDescription.count(elements.count, "item"))"
                    : "expected at most \(ValueDescription.count(allowed, "item")) (only prefixItems are allowed), found \(elements.count)")
                if !collecting { return false }
            } else {
                for i in group.prefixItems.count..<elements.count {
                    let ok = evaluateChild(items, elements[i], .index(i), group.itemsKeyword)
                    if !ok {
                        if !collecting { return false }
                        valid = false
                    }
                }
            }
            if want { local.items.insertAll() }
        }
        if let contains = group.contains, !evaluateContains(node, group, contains, elements, &local, want) {
            if !collecting { return false }
            valid = false
        }
        return valid
    }

    /// `contains` with `minContains`/`maxContains`.
    private mutating func evaluateContains(
        _ node: SchemaNode, _ group: ArrayConstraints, _ contains: SchemaNode, _ elements: [JSONValue],
        _ local: inout Annotations, _ want: Bool
    ) -> Bool {
        var matches: [Int] = []
        var scratch = Annotations()
        // Every item must be tried when annotations or maxContains need the full count.
        let needsAll = want || group.maxContains != nil
        for (i, element) in elements.enumerated() where probe(contains, element, &scratch, false) {
            matches.append(i)
            if want { local.items.insert(i) }
            if !needsAll && matches.count >= group.minContains { break }
        }
        var valid = true
        if matches.count < group.minContains {
            valid = false
            if group.minContains == 1 {
                report(node, "contains", "expected an array containing an item that matches the contains schema, found none among \(ValueDescription.count(elements.count, "item"))")
            } else {
                report(node, "minContains", "expected at least \(group.minContains) items matching the contains schema, found \(matches.count)")
            }
        }
        if let maximum = group.maxContains, matches.count > maximum {
            valid = false
            guard collecting else { return false }
            let shown = matches.prefix(10).map(String.init).joined(separator: ", ")
            report(node, "maxContains", "expected at most \(ValueDescription.count(maximum, "item")) matching the contains schema, found \(matches.count) (at \(matches.count == 1 ? "index" : "indexes") \(shown)\(matches.count > 10 ? ", …" : ""))")
        }
        return valid
    }

    /// `unevaluatedItems`: applies to items that no adjacent keyword or successful in-place
    /// subschema evaluated.
    mutating func evaluateUnevaluatedItems(_ node: SchemaNode, _ schema: SchemaNode, _ elements: [JSONValue], _ local: inout Annotations) -> Bool {
        var valid = true
        for i in elements.indices where !local.items.contains(i) {
            if schema.booleanValue == false {
                valid = false
                guard collecting else { return false }
                report(node, "unevaluatedItems", "unexpected item at index \(i) (no schema allows it), found \(ValueDescription.withType(elements[i]))")
            } else {
                let ok = evaluateChild(schema, elements[i], .index(i), "unevaluatedItems")
                if !ok {
                    valid = false
                    if !collecting { return false }
                }
            }
        }
        local.items.insertAll()
        return valid
    }

    /// The first pair of equal items, by index.
    private func firstDuplicate(_ elements: [JSONValue]) -> (Int, Int)? {
        if elements.count < 16 {
            for i in elements.indices {
                for j in (i + 1)..<elements.count where elements[i] == elements[j] { return (i, j) }
            }
            return nil
        }
        var seen: [JSONValue: Int] = [:]
        seen.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            if let earlier = seen[element] { return (earlier, i) }
            seen[element] = i
        }
        return nil
    }
}
