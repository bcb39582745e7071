/// One reason why an instance does not conform to a schema.
public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// JSON pointer to the offending value in the instance (`""` is the root), e.g.
    /// `/processes/trades/interval`.
    public var instanceLocation: String
    /// Evaluation path of the failing keyword, through any `$ref`, e.g.
    /// `/properties/processes/additionalProperties/properties/interval/minimum`.
    public var keywordLocation: String
    /// Absolute URI of the failing keyword (`<resource URI>#<pointer>`), when the schema
    /// resource has a URI.
    public var absoluteKeywordLocation: String?
    /// The failing keyword, e.g. `minimum`, `required`, `type`.
    public var keyword: String
    /// What was expected and what was found, e.g. `expected a number ≥ 0.1, found 0.05`.
    public var message: String
    /// The value could not be checked: a `pattern` match ran out of the validation's step
    /// budget (``JSONSchemaValidator/patternStepBudget``). The value is neither valid nor
    /// invalid; a caller deciding on it (a trigger's condition, a branch) should say so
    /// rather than treat it as a plain mismatch.
    public var isUndecided = false

    /// Creates a validation error.
    public init(
        instanceLocation: String, keywordLocation: String, absoluteKeywordLocation: String? = nil,
        keyword: String, message: String
    ) {
        self.instanceLocation = instanceLocation
        self.keywordLocation = keywordLocation
        self.absoluteKeywordLocation = absoluteKeywordLocation
        self.keyword = keyword
        self.message = message
    }

    /// `<instance location or "/">: <message>`.
    public var description: String {
        "\(instanceLocation.isEmpty ? "/" : instanceLocation): \(message)"
    }
}
