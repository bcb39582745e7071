/// The object keywords of one schema, including the member applicators.
final class ObjectConstraints {
    var properties: [ExactString: SchemaNode] = [:]
    /// `properties` names in schema order, for messages and suggestions.
    var propertyNames: [String] = []
    var patternProperties: [(PatternRegex, SchemaNode)] = []
    var additionalProperties: SchemaNode?
    var propertyNamesSchema: SchemaNode?
    var required: [String] = []
    /// `(keyword, trigger, dependencies)`; the keyword is `dependencies` for the legacy form.
    var dependentRequired: [(keyword: String, trigger: String, names: [String])] = []
    /// `(keyword, trigger, schema)`; the keyword is `dependencies` for the legacy form.
    var dependentSchemas: [(keyword: String, trigger: String, schema: SchemaNode)] = []
    var minProperties: Int?
    var maxProperties: Int?
    var unevaluatedProperties: SchemaNode?
}
