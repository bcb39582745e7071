/// The numeric keywords of one schema.
final class NumberConstraints {
    var minimum: JSONNumber?
    var maximum: JSONNumber?
    var exclusiveMinimum: JSONNumber?
    var exclusiveMaximum: JSONNumber?
    var multipleOf: JSONNumber?
}
