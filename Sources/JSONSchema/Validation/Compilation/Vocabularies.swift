/// The set of draft 2020-12 vocabularies whose keywords a schema resource uses.
///
/// A custom meta-schema's `$vocabulary` can switch vocabularies off (keywords of disabled
/// vocabularies are then ignored) or switch `format-assertion` on.
struct Vocabularies: OptionSet, Hashable, Sendable {
    let rawValue: UInt16

    static let core = Vocabularies(rawValue: 1 << 0)
    static let applicator = Vocabularies(rawValue: 1 << 1)
    static let unevaluated = Vocabularies(rawValue: 1 << 2)
    static let validation = Vocabularies(rawValue: 1 << 3)
    static let metaData = Vocabularies(rawValue: 1 << 4)
    static let formatAnnotation = Vocabularies(rawValue: 1 << 5)
    static let formatAssertion = Vocabularies(rawValue: 1 << 6)
    static let content = Vocabularies(rawValue: 1 << 7)
    /// Not a vocabulary: marks resources written for drafts before 2020-12, where an array
    /// `items` is a tuple and `additionalItems` applies to the rest (and `prefixItems` does
    /// not exist).
    static let legacyItems = Vocabularies(rawValue: 1 << 8)

    /// What the standard 2020-12 meta-schema enables.
    static let standard: Vocabularies = [
        .core, .applicator, .unevaluated, .validation, .metaData, .formatAnnotation, .content,
    ]

    private static let byURI: [String: Vocabularies] = [
        "https://json-schema.org/draft/2020-12/vocab/core": .core,
        "https://json-schema.org/draft/2020-12/vocab/applicator": .applicator,
        "https://json-schema.org/draft/2020-12/vocab/unevaluated": .unevaluated,
        "https://json-schema.org/draft/2020-12/vocab/validation": .validation,
        "https://json-schema.org/draft/2020-12/vocab/meta-data": .metaData,
        "https://json-schema.org/draft/2020-12/vocab/format-annotation": .formatAnnotation,
        "https://json-schema.org/draft/2020-12/vocab/format-assertion": .formatAssertion,
        "https://json-schema.org/draft/2020-12/vocab/content": .content,
    ]

    /// Meta-schemas of earlier drafts, whose resources get `legacyItems` semantics.
    static func isLegacyDialect(_ metaschemaURI: String) -> Bool {
        metaschemaURI == "https://json-schema.org/draft/2019-09/schema"
            || metaschemaURI.hasPrefix("http://json-schema.org/draft-0")
    }

    /// The vocabularies declared by a meta-schema's `$vocabulary` object. Unknown optional
    /// vocabularies are skipped; an unknown required one is reported through `unknownRequired`.
    static func declared(by vocabulary: JSONObject) -> (Vocabularies, unknownRequired: String?) {
        var result: Vocabularies = [.core]
        for (uri, required) in vocabulary {
            if let known = byURI[uri] {
                result.insert(known)
            } else if required == .bool(true) {
                return (result, uri)
            }
        }
        return (result, nil)
    }
}
