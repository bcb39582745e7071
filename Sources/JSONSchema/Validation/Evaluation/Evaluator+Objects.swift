extension Evaluator {
    /// Object keywords except `unevaluatedProperties`, which must wait for all annotations.
    mutating func evaluateObject(
        _ node: SchemaNode, _ group: ObjectConstraints, _ object: JSONObject, _ local: inout Annotations, _ want: Bool
    ) -> Bool {
        var valid = true
        if let minimum = group.minProperties, object.count < minimum {
            valid = false
            report(node, "minProperties", "expected an object with at least \(ValueDescription.count(minimum, "property", "properties")), found \(ValueDescription.count(object.count, "property", "properties"))")
            if !collecting { return false }
        }
        if let maximum = group.maxProperties, object.count > maximum {
            valid = false
            report(node, "maxProperties", "expected an object with at most \(ValueDescription.count(maximum, "property", "properties")), found \(ValueDescription.count(object.count, "property", "properties"))")
            if !collecting { return false }
        }
        for name in group.required where !object.contains(key: name) {
            valid = false
            report(node, "required", "missing required property \(ValueDescription.quoted(name))")
            if !collecting { return false }
        }
        for (keyword, trigger, dependencies) in group.dependentRequired where object.contains(key: trigger) {
            for name in dependencies where !object.contains(key: name) {
                valid = false
                report(node, keyword, "property \(ValueDescription.quoted(name)) is required when \(ValueDescription.quoted(trigger)) is present", keywordSuffix: [.key(trigger)])
                if !collecting { return false }
            }
        }
        if !group.properties.isEmpty || !group.patternProperties.isEmpty || group.additionalProperties != nil {
            if !evaluateMembers(node, group, object, &local, want) {
                if !collecting { return false }
                valid = false
            }
        }
        if let names = group.propertyNamesSchema, !evaluatePropertyNames(node, names, object) {
            if !collecting { return false }
            valid = false
        }
        for (keyword, trigger, subschema) in group.dependentSchemas where object.contains(key: trigger) {
            pushKeyword(keyword, trigger)
            let ok = evaluate(subschema, .object(object), &local, want)
            popKeyword(2)
            if !ok {
                if !collecting { return false }
                valid = false
            }
        }
        return valid
    }

    /// `properties`, `patternProperties` and `additionalProperties`, in one pass over members.
    private mutating func evaluateMembers(
        _ node: SchemaNode, _ group: ObjectConstraints, _ object: JSONObject, _ local: inout Annotations, _ want: Bool
    ) -> Bool {
        var valid = true
        for (index, entry) in object.entries.enumerated() {
            var matched = false
            if let subschema = group.properties[ExactString(entry.key)] {
                matched = true
                let ok = evaluateChild(subschema, entry.value, .key(entry.key), "properties", .key(entry.key))
                if !ok {
                    if !collecting { return false }
                    valid = false
                }
            }
            for (regex, subschema) in group.patternProperties {
                switch match(regex, entry.key) {
                case .noMatch:
                    continue
                case .overBudget:
                    // Counted as matched: `additionalProperties` would only add a guess.
                    matched = true
                    valid = false
                    reportOverBudget(node, "patternProperties", regex, entry.key, member: entry.key)
                    if !collecting { return false }
                    continue
                case .match:
                    matched = true
                }
                let ok = evaluateChild(subschema, entry.value, .key(entry.key), "patternProperties", .key(regex.source))
                if !ok {
                    if !collecting { return false }
                    valid = false
                }
            }
            if !matched, let additional = group.additionalProperties {
                matched = true
                if additional.booleanValue == false {
                    valid = false
                    reportUnknownProperty(node, "additionalProperties", entry.key, allowed: group.propertyNames)
                    if !collecting { return false }
                } else {
                    let ok = evaluateChild(additional, entry.value, .key(entry.key), "additionalProperties")
                    if !ok {
                        if !collecting { return false }
                        valid = false
                    }
                }
            }
            if matched && want { local.properties.insert(index) }
        }
        return valid
    }

    /// `propertyNames`: each member name, as a string, must match the subschema.
    private mutating func evaluatePropertyNames(_ node: SchemaNode, _ schema: SchemaNode, _ object: JSONObject) -> Bool {
        var valid = true
        for entry in object.entries {
            var scratch = Annotations()
            let name = JSONValue.string(entry.key)
            guard !probe(schema, name, &scratch, false) else { continue }
            valid = false
            guard collecting else { return false }
            pushKeyword("propertyNames")
            let explained = explain(schema, name)
            popKeyword()
            let reason = explained.errors.first.map { ": \($0.message)" } ?? ""
            report(node, "propertyNames", "invalid property name \(ValueDescription.quoted(entry.key))\(reason)")
        }
        return valid
    }

    /// `unevaluatedProperties`: applies to members that no adjacent keyword or successful
    /// in-place subschema evaluated.
    mutating func evaluateUnevaluatedProperties(
        _ node: SchemaNode, _ schema: SchemaNode, _ object: JSONObject, _ local: inout Annotations
    ) -> Bool {
        var valid = true
        for (index, entry) in object.entries.enumerated() where !local.properties.contains(index) {
            if schema.booleanValue == false {
                valid = false
                guard collecting else { return false }
                reportUnknownProperty(node, "unevaluatedProperties", entry.key, allowed: knownPropertyNames(node))
            } else {
                let ok = evaluateChild(schema, entry.value, .key(entry.key), "unevaluatedProperties")
                if !ok {
                    valid = false
                    if !collecting { return false }
                }
            }
            local.properties.insert(index)
        }
        return valid
    }

    /// `unknown property "intervall"; did you mean "interval"?`, or the allowed names.
    private mutating func reportUnknownProperty(_ node: SchemaNode, _ keyword: String, _ name: String, allowed: [String]) {
        guard collecting else { return }
        var message = "unknown property \(ValueDescription.quoted(name))"
        if let suggestion = Suggestions.closest(to: name, among: allowed) {
            message += "; did you mean \(ValueDescription.quoted(suggestion))?"
        } else if !allowed.isEmpty {
            let limit = 10
            var listed = allowed.prefix(limit).map(ValueDescription.quoted).joined(separator: ", ")
            if allowed.count > limit { listed += ", … (\(allowed.count - limit) more)" }
            message += "; allowed: \(listed)"
        }
        report(node, keyword, message)
    }

    /// Property names declared by `properties` in this schema and the schemas it applies in
    /// place, for suggestions under `unevaluatedProperties`.
    private func knownPropertyNames(_ node: SchemaNode) -> [String] {
        var names: [String] = []
        var visited: Set<ObjectIdentifier> = []
        var stack = [node]
        while let current = stack.popLast(), visited.count < 64 {
            guard visited.insert(ObjectIdentifier(current)).inserted else { continue }
            for name in current.objects?.propertyNames ?? [] where !names.contains(name) { names.append(name) }
            if let ref = current.ref { stack.append(ref) }
            if let dynamic = current.dynamicRef { stack.append(dynamic.target) }
            stack += current.allOf + current.anyOf + current.oneOf
            if let conditional = current.conditional {
                stack += [conditional.then, conditional.otherwise].compactMap { $0 }
            }
            stack += current.objects?.dependentSchemas.map(\.schema) ?? []
        }
        return names
    }
}
