/// A compiled schema: every keyword is parsed, references are resolved to nodes and regular
/// expressions are compiled, so validation never looks at schema JSON again.
///
/// Keywords are grouped by the instance type they constrain so that validating, say, a string
/// skips all object and array keywords with one `nil` check each.
///
/// Nodes are built while the validator is compiled (references may form cycles, so they are
/// created first and filled in later) and are never mutated afterwards, which is what makes
/// sharing them across threads sound. `$ref` links are `unowned(unsafe)`: every node is owned
/// by the validator's node list, and cycles only ever pass through such links.
// @unchecked: a cyclic graph filled in while compiling, immutable once the validator exists;
// its hot path reads it without a lock.
final class SchemaNode: @unchecked Sendable {
    let document: Int
    let pointer: [String]
    unowned(unsafe) let resource: SchemaResource

    /// Set for the boolean schemas `true` and `false`.
    var booleanValue: Bool?

    unowned(unsafe) var ref: SchemaNode?
    var dynamicRef: DynamicReference?
    var allOf: [SchemaNode] = []
    var anyOf: [SchemaNode] = []
    var oneOf: [SchemaNode] = []
    var not: SchemaNode?
    var conditional: Conditional?

    var types: JSONTypeSet?
    var enumeration: EnumConstraint?
    var constant: JSONValue?
    var format: FormatConstraint?
    var numbers: NumberConstraints?
    var strings: StringConstraints?
    var arrays: ArrayConstraints?
    var objects: ObjectConstraints?

    init(document: Int, pointer: [String], resource: SchemaResource) {
        self.document = document
        self.pointer = pointer
        self.resource = resource
    }

    /// Whether `unevaluatedProperties` here needs the evaluated-property annotations.
    var tracksProperties: Bool { objects?.unevaluatedProperties != nil }
    /// Whether `unevaluatedItems` here needs the evaluated-item annotations.
    var tracksItems: Bool { arrays?.unevaluatedItems != nil }
}

/// A `$dynamicRef`: the statically resolved target, plus the anchor name to look up in the
/// dynamic scope when that target declares a matching `$dynamicAnchor`.
struct DynamicReference {
    unowned(unsafe) let target: SchemaNode
    let dynamicAnchor: String?
}

/// `if` with its optional `then` and `else`.
final class Conditional {
    let condition: SchemaNode
    let then: SchemaNode?
    let otherwise: SchemaNode?

    init(condition: SchemaNode, then: SchemaNode?, otherwise: SchemaNode?) {
        self.condition = condition
        self.then = then
        self.otherwise = otherwise
    }
}
