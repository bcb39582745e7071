extension SchemaCompiler {
    /// Fills `node` from its schema JSON. Keywords of vocabularies that the resource's
    /// meta-schema does not enable are ignored, as are unknown keywords.
    func compile(_ node: SchemaNode, _ value: JSONValue) throws(JSONSchemaCompileError) {
        let schema: JSONObject
        switch value {
        case .bool(let b):
            node.booleanValue = b
            return
        case .object(let object):
            schema = object
        default:
            throw compileError(node.document, node.pointer, "a schema must be an object or a boolean, found \(ValueDescription.withType(value))")
        }
        let vocabularies = node.resource.vocabularies
        try compileReferences(node, schema)
        if vocabularies.contains(.applicator) {
            try compileInPlaceApplicators(node, schema)
            try compileChildApplicators(node, schema)
        }
        if vocabularies.contains(.unevaluated) {
            if schema["unevaluatedProperties"] != nil {
                objects(node).unevaluatedProperties = try child(node, "unevaluatedProperties")
            }
            if schema["unevaluatedItems"] != nil {
                arrays(node).unevaluatedItems = try child(node, "unevaluatedItems")
            }
        }
        if vocabularies.contains(.validation) {
            try compileGenericAssertions(node, schema)
            try compileNumberAndStringAssertions(node, schema)
            try compileContainerAssertions(node, schema)
        }
        if let format = schema["format"], vocabularies.contains(.formatAnnotation) || vocabularies.contains(.formatAssertion) {
            guard case .string(let name) = format else {
                throw compileError(node.document, node.pointer + ["format"], "format must be a string, found \(ValueDescription.withType(format))")
            }
            if let check = FormatCheckers.checker(for: name) {
                let assert = formatAssertion || vocabularies.contains(.formatAssertion)
                node.format = FormatConstraint(name: name, check: check, assert: assert)
            }
        }
    }

    private func compileReferences(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        if let ref = schema["$ref"] {
            guard case .string(let reference) = ref else { throw keywordError(node, "$ref", "must be a string", ref) }
            node.ref = try resolveReference(reference, from: node, keyword: "$ref").0
        }
        if let ref = schema["$dynamicRef"] {
            guard case .string(let reference) = ref else { throw keywordError(node, "$dynamicRef", "must be a string", ref) }
            let (target, fragment) = try resolveReference(reference, from: node, keyword: "$dynamicRef")
            // Only a target that itself declares the matching $dynamicAnchor makes the reference
            // dynamic; otherwise it behaves exactly like $ref.
            var anchor: String?
            if !fragment.isEmpty,
                case .string(let declared)? = registry.value(document: target.document, pointer: target.pointer)?["$dynamicAnchor"],
                declared == fragment
            {
                anchor = fragment
            }
            node.dynamicRef = DynamicReference(target: target, dynamicAnchor: anchor)
        }
    }

    private func compileInPlaceApplicators(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        node.allOf = try schemaArray(node, schema, "allOf")
        node.anyOf = try schemaArray(node, schema, "anyOf")
        node.oneOf = try schemaArray(node, schema, "oneOf")
        if schema["not"] != nil { node.not = try child(node, "not") }
        if schema["if"] != nil {
            node.conditional = Conditional(
                condition: try child(node, "if"),
                then: schema["then"] != nil ? try child(node, "then") : nil,
                otherwise: schema["else"] != nil ? try child(node, "else") : nil)
        }
        if let value = schema["dependentSchemas"] {
            guard case .object(let members) = value else { throw keywordError(node, "dependentSchemas", "must be an object", value) }
            for (name, _) in members {
                objects(node).dependentSchemas.append(("dependentSchemas", name, try child(node, "dependentSchemas", name)))
            }
        }
        // The pre-2019 "dependencies" keyword, still common in the wild: schema values act as
        // dependentSchemas, string arrays as dependentRequired.
        if case .object(let members)? = schema["dependencies"] {
            for (name, dependency) in members {
                if case .array = dependency {
                    objects(node).dependentRequired.append(("dependencies", name, try stringArray(node, "dependencies", dependency)))
                } else {
                    objects(node).dependentSchemas.append(("dependencies", name, try child(node, "dependencies", name)))
                }
            }
        }
    }

    private func compileChildApplicators(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        if let value = schema["properties"] {
            guard case .object(let members) = value else { throw keywordError(node, "properties", "must be an object", value) }
            let group = objects(node)
            for (name, _) in members {
                group.properties[ExactString(name)] = try child(node, "properties", name)
                group.propertyNames.append(name)
            }
        }
        if let value = schema["patternProperties"] {
            guard case .object(let members) = value else { throw keywordError(node, "patternProperties", "must be an object", value) }
            for (pattern, _) in members {
                let regex = try compilePattern(pattern, node, ["patternProperties", pattern])
                objects(node).patternProperties.append((regex, try child(node, "patternProperties", pattern)))
            }
        }
        if schema["additionalProperties"] != nil {
            objects(node).additionalProperties = try child(node, "additionalProperties")
        }
        if schema["propertyNames"] != nil {
            objects(node).propertyNamesSchema = try child(node, "propertyNames")
        }
        if node.resource.vocabularies.contains(.legacyItems) {
            try compileLegacyItems(node, schema)
        } else {
            try compileItems(node, schema)
        }
        if schema["contains"] != nil {
            arrays(node).contains = try child(node, "contains")
        }
    }

    private func compileItems(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        let prefixItems = try schemaArray(node, schema, "prefixItems")
        if !prefixItems.isEmpty { arrays(node).prefixItems = prefixItems }
        if let items = schema["items"] {
            if case .array = items {
                throw keywordError(node, "items", "must be a schema in draft 2020-12 (use prefixItems for tuples)", items)
            }
            arrays(node).items = try child(node, "items")
        }
    }

    /// Draft 2019-09 and earlier: an array `items` is a tuple, `additionalItems` covers the rest.
    private func compileLegacyItems(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        guard let items = schema["items"] else { return }
        if case .array = items {
            let tuple = try schemaArray(node, schema, "items")
            arrays(node).prefixItems = tuple
            arrays(node).prefixItemsKeyword = "items"
            arrays(node).itemsKeyword = "additionalItems"
            if schema["additionalItems"] != nil {
                arrays(node).items = try child(node, "additionalItems")
            }
        } else {
            arrays(node).items = try child(node, "items")
        }
    }

    private func compileGenericAssertions(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        if let value = schema["type"] {
            var types: JSONTypeSet = []
            let names: [JSONValue]
            switch value {
            case .string: names = [value]
            case .array(let list): names = list
            default: throw keywordError(node, "type", "must be a type name or an array of type names", value)
            }
            for name in names {
                guard case .string(let text) = name, let type = JSONTypeSet(name: text) else {
                    throw keywordError(node, "type", "must name JSON types (null, boolean, integer, number, string, array, object)", name)
                }
                types.insert(type)
            }
            node.types = types
        }
        if let value = schema["enum"] {
            guard case .array(let values) = value else { throw keywordError(node, "enum", "must be an array", value) }
            node.enumeration = EnumConstraint(values)
        }
        if let value = schema["const"] {
            node.constant = value
        }
    }

    private func compileNumberAndStringAssertions(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        func number(_ keyword: String) throws(JSONSchemaCompileError) -> JSONNumber? {
            guard let value = schema[keyword] else { return nil }
            guard case .number(let n) = value else { throw keywordError(node, keyword, "must be a number", value) }
            return n
        }
        let minimum = try number("minimum")
        let maximum = try number("maximum")
        let exclusiveMinimum = try number("exclusiveMinimum")
        let exclusiveMaximum = try number("exclusiveMaximum")
        let multipleOf = try number("multipleOf")
        if let multipleOf, multipleOf.compare(to: JSONNumber(0)) ?? 0 <= 0 {
            throw keywordError(node, "multipleOf", "must be greater than 0", .number(multipleOf))
        }
        if minimum != nil || maximum != nil || exclusiveMinimum != nil || exclusiveMaximum != nil || multipleOf != nil {
            let group = NumberConstraints()
            group.minimum = minimum
            group.maximum = maximum
            group.exclusiveMinimum = exclusiveMinimum
            group.exclusiveMaximum = exclusiveMaximum
            group.multipleOf = multipleOf
            node.numbers = group
        }
        let minLength = try nonNegativeInteger(node, schema, "minLength")
        let maxLength = try nonNegativeInteger(node, schema, "maxLength")
        var pattern: PatternRegex?
        if let value = schema["pattern"] {
            guard case .string(let text) = value else { throw keywordError(node, "pattern", "must be a string", value) }
            pattern = try compilePattern(text, node, ["pattern"])
        }
        if minLength != nil || maxLength != nil || pattern != nil {
            let group = StringConstraints()
            group.minLength = minLength
            group.maxLength = maxLength
            group.pattern = pattern
            node.strings = group
        }
    }

    private func compileContainerAssertions(_ node: SchemaNode, _ schema: JSONObject) throws(JSONSchemaCompileError) {
        if let n = try nonNegativeInteger(node, schema, "minItems") { arrays(node).minItems = n }
        if let n = try nonNegativeInteger(node, schema, "maxItems") { arrays(node).maxItems = n }
        if let value = schema["uniqueItems"] {
            guard case .bool(let unique) = value else { throw keywordError(node, "uniqueItems", "must be a boolean", value) }
            if unique { arrays(node).uniqueItems = true }
        }
        if node.arrays?.contains != nil {
            if let n = try nonNegativeInteger(node, schema, "minContains") { arrays(node).minContains = n }
            if let n = try nonNegativeInteger(node, schema, "maxContains") { arrays(node).maxContains = n }
        }
        if let n = try nonNegativeInteger(node, schema, "minProperties") { objects(node).minProperties = n }
        if let n = try nonNegativeInteger(node, schema, "maxProperties") { objects(node).maxProperties = n }
        if let value = schema["required"] {
            objects(node).required = try stringArray(node, "required", value)
        }
        if let value = schema["dependentRequired"] {
            guard case .object(let members) = value else { throw keywordError(node, "dependentRequired", "must be an object", value) }
            for (name, list) in members {
                objects(node).dependentRequired.append(("dependentRequired", name, try stringArray(node, "dependentRequired", list)))
            }
        }
    }

    // MARK: - Helpers

    private func objects(_ node: SchemaNode) -> ObjectConstraints {
        if let existing = node.objects { return existing }
        let group = ObjectConstraints()
        node.objects = group
        return group
    }

    private func arrays(_ node: SchemaNode) -> ArrayConstraints {
        if let existing = node.arrays { return existing }
        let group = ArrayConstraints()
        node.arrays = group
        return group
    }

    private func schemaArray(_ node: SchemaNode, _ schema: JSONObject, _ keyword: String) throws(JSONSchemaCompileError) -> [SchemaNode] {
        guard let value = schema[keyword] else { return [] }
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw keywordError(node, keyword, "must be a non-empty array of schemas", value)
        }
        var result: [SchemaNode] = []
        result.reserveCapacity(elements.count)
        for i in elements.indices { result.append(try child(node, keyword, String(i))) }
        return result
    }

    private func nonNegativeInteger(_ node: SchemaNode, _ schema: JSONObject, _ keyword: String) throws(JSONSchemaCompileError) -> Int? {
        guard let value = schema[keyword] else { return nil }
        guard case .number(let n) = value, n.isInteger, n.compare(to: JSONNumber(0)) ?? -1 >= 0 else {
            throw keywordError(node, keyword, "must be a non-negative integer", value)
        }
        return n.intValue ?? Int.max
    }

    private func stringArray(_ node: SchemaNode, _ keyword: String, _ value: JSONValue) throws(JSONSchemaCompileError) -> [String] {
        guard case .array(let elements) = value else { throw keywordError(node, keyword, "must be an array of strings", value) }
        var result: [String] = []
        for element in elements {
            guard case .string(let s) = element else { throw keywordError(node, keyword, "must be an array of strings", value) }
            result.append(s)
        }
        return result
    }

    private func compilePattern(_ pattern: String, _ node: SchemaNode, _ tokens: [String]) throws(JSONSchemaCompileError) -> PatternRegex {
        do {
            return try PatternRegex(pattern)
        } catch {
            throw compileError(node.document, node.pointer + tokens, "invalid regular expression \(ValueDescription.compact(.string(pattern))): \(error.message)")
        }
    }

    private func keywordError(_ node: SchemaNode, _ keyword: String, _ requirement: String, _ found: JSONValue) -> JSONSchemaCompileError {
        compileError(node.document, node.pointer + [keyword], "\(keyword) \(requirement), found \(ValueDescription.withType(found))")
    }
}
