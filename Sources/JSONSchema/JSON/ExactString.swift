/// A string compared and hashed by its Unicode scalars (UTF-8 bytes).
///
/// Swift's `String ==` treats canonically equivalent strings (`"ä"` and `"a\u{308}"`) as equal,
/// but JSON and JSON Schema compare strings code point by code point.
struct ExactString: Hashable, Sendable {
    let value: String

    init(_ value: String) {
        self.value = value
    }

    static func == (lhs: ExactString, rhs: ExactString) -> Bool {
        lhs.value.isExactlyEqual(to: rhs.value)
    }

    func hash(into hasher: inout Hasher) {
        value.hashExactly(into: &hasher)
    }
}
