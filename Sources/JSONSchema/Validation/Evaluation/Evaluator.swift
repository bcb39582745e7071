/// Evaluates compiled schemas against one instance.
///
/// Two modes share one code path: *collecting* (for `validate`) keeps going after failures,
/// tracks instance and keyword paths and builds messages; *quiet* (for `isValid`, and for
/// probing `anyOf`/`oneOf`/`not`/`if`/`contains` branches) keeps no paths, builds no strings
/// and returns at the first failure. Messages are built only once a failure is certain.
struct Evaluator {
    /// Subschemas applied to the same value in a row before giving up on a schema that
    /// recurses without reaching a member or item (e.g. `{"$ref": "#"}`).
    static let maxInPlaceDepth = 128
    /// Nested evaluations allowed in total, which bounds stack use on very deep instances.
    static let maxDepth = 4096

    private(set) var collecting: Bool
    var errors: [ValidationError] = []
    /// For each entry of `errors`, what was expected when it is a plain value mismatch
    /// (`type`, `const`, `enum`): lets `anyOf`/`oneOf` merge such branches into one message.
    var expectations: [String?] = []
    var keywordPath: [PathToken] = []
    var instancePath: [PathToken] = []
    /// Resources entered so far, outermost first: the dynamic scope for `$dynamicRef`.
    var scope: [SchemaResource] = []
    private var depth = 0
    private var inPlaceDepth = 0
    /// What matching `pattern` and `patternProperties` may still cost in this validation.
    var patternBudget = PatternBudget()
    /// The first match that ran out of `patternBudget`: it fails the whole validation, even
    /// where it was probed under `not` or in a branch that another branch made irrelevant.
    var patternOverrun: ValidationError?
    /// The last match out of budget began with less than half of it left (the earlier values
    /// spent it), which its message says.
    var overrunOfASpentBudget = false
    /// Schema evaluations made so far, and how many this validation may make (see
    /// ``overEvaluationBudget()``).
    var evaluations = 0
    var evaluationLimit = Evaluator.evaluationsBeforeSizing
    /// The instance validated, whose size raises the limit once ``evaluationsBeforeSizing``
    /// are spent (nil: it did).
    var unsizedInstance: JSONValue?
    /// Set once the evaluations ran out: it fails the whole validation, as `patternOverrun`.
    var evaluationOverrun: ValidationError?
    /// Errors were left out beyond ``mostErrors``.
    var errorsCut = false

    init(collecting: Bool) {
        self.collecting = collecting
    }

    /// Validates `instance` against `node`. When `want` is set, the members and items that
    /// this schema evaluates are added to `annotations`.
    mutating func evaluate(_ node: SchemaNode, _ instance: JSONValue, _ annotations: inout Annotations, _ want: Bool) -> Bool {
        if let boolean = node.booleanValue {
            if !boolean { reportFalseSchema(instance) }
            return boolean
        }
        evaluations += 1
        if evaluations > evaluationLimit, overEvaluationBudget() { return false }
        depth += 1
        inPlaceDepth += 1
        defer {
            depth -= 1
            inPlaceDepth -= 1
        }
        guard inPlaceDepth <= Evaluator.maxInPlaceDepth, depth <= Evaluator.maxDepth else {
            let cycle = inPlaceDepth > Evaluator.maxInPlaceDepth
            report(node, "$ref", cycle
                ? "the schema applies subschemas to the same value more than \(Evaluator.maxInPlaceDepth) times in a row (a reference cycle that never reaches a member or item)"
                : "the instance is nested too deeply to validate (more than \(Evaluator.maxDepth) nested schema evaluations)")
            return false
        }
        let entered = scope.last !== node.resource
        if entered { scope.append(node.resource) }
        defer { if entered { scope.removeLast() } }

        if let types = node.types, !types.matches(instance) {
            report(node, "type", "expected \(Evaluator.typeExpectation(node, types)), found \(ValueDescription.withType(instance))",
                expectation: Evaluator.typeExpectation(node, types))
            // Other assertions would only repeat the mismatch in other words.
            return false
        }
        var valid = true
        if let constant = node.constant, constant != instance {
            valid = false
            reportConstMismatch(node, constant, instance)
            if !collecting { return false }
        }
        if let enumeration = node.enumeration, !enumeration.contains(instance) {
            valid = false
            reportEnumMismatch(node, enumeration.values, instance)
            if !collecting { return false }
        }

        let tracks: Bool
        switch instance {
        case .object: tracks = node.tracksProperties
        case .array: tracks = node.tracksItems
        default: tracks = false
        }
        let wantsAnnotations = want || tracks
        var local = Annotations()

        switch instance {
        case .number(let number):
            if let numbers = node.numbers, !evaluateNumber(node, numbers, number) {
                if !collecting { return false }
                valid = false
            }
        case .string(let string):
            if !evaluateString(node, string) {
                if !collecting { return false }
                valid = false
            }
        case .array(let elements):
            if let arrays = node.arrays, !evaluateArray(node, arrays, elements, &local, wantsAnnotations) {
                if !collecting { return false }
                valid = false
            }
        case .object(let object):
            if let objects = node.objects, !evaluateObject(node, objects, object, &local, wantsAnnotations) {
                if !collecting { return false }
                valid = false
            }
        default:
            break
        }

        if !evaluateInPlace(node, instance, &local, wantsAnnotations) {
            if !collecting { return false }
            valid = false
        }

        if tracks {
            switch instance {
            case .object(let object):
                if let objects = node.objects, let unevaluated = objects.unevaluatedProperties,
                    !evaluateUnevaluatedProperties(node, unevaluated, object, &local)
                {
                    valid = false
                }
            case .array(let elements):
                if let unevaluated = node.arrays?.unevaluatedItems, !evaluateUnevaluatedItems(node, unevaluated, elements, &local) {
                    valid = false
                }
            default:
                break
            }
        }
        if want { annotations.formUnion(local) }
        return valid
    }

    /// Evaluates `node` against a member or item of the current instance, found at `location`
    /// and reached through `keyword` (plus `keywordToken`, e.g. the property name).
    mutating func evaluateChild(
        _ node: SchemaNode, _ value: JSONValue, _ location: PathToken, _ keyword: String, _ keywordToken: PathToken? = nil
    ) -> Bool {
        let tracked = collecting
        if tracked {
            keywordPath.append(.key(keyword))
            if let keywordToken { keywordPath.append(keywordToken) }
            instancePath.append(location)
        }
        let savedInPlaceDepth = inPlaceDepth
        inPlaceDepth = 0
        var scratch = Annotations()
        let valid = evaluate(node, value, &scratch, false)
        inPlaceDepth = savedInPlaceDepth
        if tracked {
            instancePath.removeLast()
            keywordPath.removeLast(keywordToken == nil ? 1 : 2)
        }
        return valid
    }

    /// Evaluates without collecting errors or paths (used to probe branches).
    mutating func probe(_ node: SchemaNode, _ instance: JSONValue, _ annotations: inout Annotations, _ want: Bool) -> Bool {
        guard collecting else { return evaluate(node, instance, &annotations, want) }
        collecting = false
        defer { collecting = true }
        return evaluate(node, instance, &annotations, want)
    }

    /// Evaluates `node` in collecting mode into a separate error list (used to explain why a
    /// probed branch failed).
    mutating func explain(_ node: SchemaNode, _ instance: JSONValue) -> (errors: [ValidationError], expectations: [String?]) {
        let savedErrors = errors
        let savedExpectations = expectations
        errors = []
        expectations = []
        var scratch = Annotations()
        _ = evaluate(node, instance, &scratch, false)
        let result = (errors, expectations)
        errors = savedErrors
        expectations = savedExpectations
        return result
    }

    // MARK: - Paths

    @inline(__always)
    mutating func pushKeyword(_ keyword: String) {
        if collecting { keywordPath.append(.key(keyword)) }
    }

    @inline(__always)
    mutating func pushKeyword(_ keyword: String, _ index: Int) {
        if collecting {
            keywordPath.append(.key(keyword))
            keywordPath.append(.index(index))
        }
    }

    @inline(__always)
    mutating func pushKeyword(_ keyword: String, _ name: String) {
        if collecting {
            keywordPath.append(.key(keyword))
            keywordPath.append(.key(name))
        }
    }

    @inline(__always)
    mutating func popKeyword(_ count: Int = 1) {
        if collecting { keywordPath.removeLast(count) }
    }

    // MARK: - Reporting

    /// Records a failure of `keyword` in `node` at the current locations. The message is only
    /// built in collecting mode.
    mutating func report(
        _ node: SchemaNode, _ keyword: String, _ message: @autoclosure () -> String,
        keywordSuffix: [PathToken] = [], expectation: @autoclosure () -> String? = nil
    ) {
        guard collecting, hasRoomForAnError() else { return }
        var absolute: String?
        if !node.resource.isSynthetic {
            let relative = node.pointer.dropFirst(node.resource.rootPointer.count).map(PathToken.key)
            absolute = node.resource.uri + "#" + PathToken.pointer(relative + [.key(keyword)] + keywordSuffix)
        }
        errors.append(
            ValidationError(
                instanceLocation: PathToken.pointer(instancePath),
                keywordLocation: PathToken.pointer(keywordPath + [.key(keyword)] + keywordSuffix),
                absoluteKeywordLocation: absolute,
                keyword: keyword,
                message: message()))
        expectations.append(expectation())
    }

    /// A `false` subschema was reached: nothing is allowed at this location.
    private mutating func reportFalseSchema(_ instance: JSONValue) {
        guard collecting, hasRoomForAnError() else { return }
        let message: String
        switch instancePath.last {
        case .key(let key): message = "property \(ValueDescription.quoted(key)) is not allowed"
        case .index(let index): message = "no item is allowed at index \(index), found \(ValueDescription.withType(instance))"
        case nil: message = "no value is allowed here (the schema is false), found \(ValueDescription.withType(instance))"
        }
        errors.append(
            ValidationError(
                instanceLocation: PathToken.pointer(instancePath), keywordLocation: PathToken.pointer(keywordPath),
                absoluteKeywordLocation: nil, keyword: "false", message: message))
        expectations.append(nil)
    }

    /// Appends errors gathered by `explain`.
    mutating func append(_ explained: (errors: [ValidationError], expectations: [String?])) {
        errors += explained.errors
        expectations += explained.expectations
    }
}
