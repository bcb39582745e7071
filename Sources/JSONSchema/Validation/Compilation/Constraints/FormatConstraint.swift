/// `format` with its checker; `assert` is false when format is only an annotation.
struct FormatConstraint {
    let name: String
    let check: @Sendable (String) -> Bool
    let assert: Bool
}
