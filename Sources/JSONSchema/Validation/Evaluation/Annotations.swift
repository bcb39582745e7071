/// The annotations that `unevaluatedProperties` and `unevaluatedItems` depend on: which
/// members (by position in the instance object) and which array indexes some adjacent
/// keyword, or a successful in-place subschema, has already evaluated.
struct Annotations {
    var properties = EvaluatedSet()
    var items = EvaluatedSet()

    mutating func formUnion(_ other: Annotations) {
        properties.formUnion(other.properties)
        items.formUnion(other.items)
    }
}
