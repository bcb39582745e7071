import JSONSchema

/// What a condition (a trigger's or a wait's `where`, a condition step's `when`) says of a
/// value: it passes, it fails, or it could not be decided because a `pattern` in it ran out of
/// the validation's step budget — which is neither, and is said rather than taken as a miss.
package enum ConditionOutcome {
    case passes
    case fails
    case undecided(ValidationError)

    package init(_ condition: JSONSchemaValidator, on value: JSONValue) {
        let errors = condition.validate(value)
        if let overrun = errors.first(where: \.isUndecided) {
            self = .undecided(overrun)
        } else {
            self = errors.isEmpty ? .passes : .fails
        }
    }
}
