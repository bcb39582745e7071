/// A compiled JSON Schema (draft 2020-12) that validates instances.
///
/// Compile once, validate many: references, vocabularies and regular expressions are all
/// resolved by `init`, after which the validator is immutable and can be used from any
/// number of threads at once.
///
/// ```swift
/// let validator = try JSONSchemaValidator(schema: JSONValue.parse(schemaText))
/// for error in validator.validate(try JSONValue.parse(documentText)) {
///     print(error)   // "/processes/trades/interval: expected a number ≥ 0.1, found 0.05"
/// }
/// ```
public final class JSONSchemaValidator: Sendable {
    /// Validation options.
    public struct Options: Sendable {
        /// Whether `format` is an assertion (invalid dates, emails, … fail validation). By
        /// default it is only an annotation, as draft 2020-12 specifies; a meta-schema that
        /// enables the format-assertion vocabulary turns it on as well.
        public var formatAssertion: Bool = false

        /// Creates options.
        public init(formatAssertion: Bool = false) {
            self.formatAssertion = formatAssertion
        }
    }

    private let root: SchemaNode
    // Keep every node and resource alive: nodes reference each other through unowned links.
    private let nodes: [SchemaNode]
    private let resources: [SchemaResource]

    /// Compiles `schema`.
    ///
    /// - Parameters:
    ///   - schema: The schema (an object or a boolean).
    ///   - baseURI: The URI the schema was retrieved from, used to resolve relative `$id` and
    ///     `$ref` values. Without it, only references within the schema and to `resources`
    ///     by absolute URI resolve.
    ///   - resources: Other schema documents by absolute URI (e.g.
    ///     `"http://localhost:1234/name.json"`), available to `$ref`. The draft 2020-12
    ///     meta-schemas are built in. The network and file system are never used.
    ///   - options: Validation options.
    /// - Throws: `JSONSchemaCompileError` for malformed keywords, unresolvable references,
    ///   invalid regular expressions or unsupported required vocabularies.
    public init(
        schema: JSONValue, baseURI: String? = nil, resources: [String: JSONValue] = [:], options: Options = .init()
    ) throws(JSONSchemaCompileError) {
        let registry = SchemaRegistry()
        registry.addDocument(schema, uri: baseURI ?? JSONSchemaValidator.defaultBaseURI, isSynthetic: baseURI == nil)
        // Sorted so that, when two documents claim the same $id, the outcome is deterministic.
        for (uri, document) in resources.sorted(by: { $0.key < $1.key }) {
            registry.addDocument(document, uri: uri)
        }
        let compiler = SchemaCompiler(registry: registry, formatAssertion: options.formatAssertion)
        root = try compiler.node(document: 0, pointer: [])
        try compiler.compilePending()
        nodes = compiler.allNodes
        self.resources = registry.resources
    }

    /// Steps that matching `pattern` and `patternProperties` may cost in one call of
    /// `validate` or `isValid`, all matches together (a few milliseconds of CPU); see `validate`.
    public static let patternStepBudget = PatternBudget.perValidation

    /// Base URI for schemas given without one; never shown in error locations.
    static let defaultBaseURI = "urn:jsonschema:root"

    /// Validates `instance` and returns every error found (empty when valid). Each error says
    /// where in the instance it is, which keyword failed, and what was expected and found.
    ///
    /// Matching `pattern` and `patternProperties` costs at most `patternStepBudget` steps in
    /// all; a match that would cost more fails the validation with an error of
    /// keyword `pattern` or `patternProperties` that names the pattern and the bound. The
    /// subschemas evaluated are bounded too, by the instance's size (100,000, or 16 per value
    /// of the instance if more): past that the validation fails with an undecided error first.
    public func validate(_ instance: JSONValue) -> [ValidationError] {
        var evaluator = Evaluator(collecting: true)
        evaluator.unsizedInstance = instance
        var annotations = Annotations()
        _ = evaluator.evaluate(root, instance, &annotations, false)
        // Out of evaluations: that first (it is why the rest may be incomplete), and a few of
        // the errors found before.
        if let overrun = evaluator.evaluationOverrun {
            // A schema that doubled its work doubled its errors too: each said once.
            var seen = Set<String>()
            let distinct = evaluator.errors.filter { seen.insert($0.description).inserted }
            return [overrun] + distinct.prefix(Self.errorsShownWithAnOverrun)
        }
        // A match that ran out of budget fails the validation even where its failure was
        // inverted (`not`) or outweighed (another `anyOf` branch passed).
        var errors = evaluator.errors
        if let overrun = evaluator.patternOverrun, !errors.contains(overrun) { errors.append(overrun) }
        if evaluator.errorsCut {
            errors.append(ValidationError(instanceLocation: "", keywordLocation: "", keyword: "$schema",
                                          message: "more errors were found; only the first \(Evaluator.mostErrors) are listed"))
        }
        return errors
    }

    /// Whether `instance` is valid; faster than `validate` as it stops at the first failure
    /// and builds no messages.
    public func isValid(_ instance: JSONValue) -> Bool {
        var evaluator = Evaluator(collecting: false)
        evaluator.unsizedInstance = instance
        var annotations = Annotations()
        return evaluator.evaluate(root, instance, &annotations, false) && evaluator.patternOverrun == nil && evaluator.evaluationOverrun == nil
    }

    /// Errors found before the evaluations ran out that ``validate(_:)`` returns with the overrun.
    static let errorsShownWithAnOverrun = 20
}
