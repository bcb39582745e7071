import JSONSchema

/// The strings of a process's settings whose values came from the environment
/// (`${env:NAME}`), and the rewriting that keeps those values out of every message: a value
/// from the environment is never printed (not in the validation report, the log, `reload`'s
/// answer or `--json`), only where it came from.
package struct EnvironmentSecrets: Sendable {
    /// One resolved string.
    package struct Secret: Sendable {
        /// Absolute JSON pointer of the string in the settings file.
        package var pointer: String
        /// The string as written, e.g. `Bearer ${env:TOKEN}`.
        package var written: String
        /// The resolved value: what must not be shown.
        package var value: String
        /// The variables it was made from.
        package var names: [String]
    }

    package private(set) var secrets: [Secret] = []

    package var isEmpty: Bool { secrets.isEmpty }

    package mutating func add(pointer: String, written: String, value: String) {
        guard value != written else { return }
        secrets.append(Secret(pointer: pointer, written: written, value: value, names: Self.referencedNames(written)))
    }

    /// `TOKEN` and `USER` for `${env:USER}:${env:TOKEN}`, in order, without repeats.
    package static func referencedNames(_ text: String) -> [String] {
        var names: [String] = []
        var rest = text[...]
        while let start = rest.range(of: "${env:") {
            let after = rest[start.upperBound...]
            guard let close = after.firstIndex(of: "}") else { break }
            let name = String(after[..<close])
            if !name.isEmpty, !names.contains(name) { names.append(name) }
            rest = after[after.index(after: close)...]
        }
        return names
    }

    /// `a string from ${env:TOKEN} (not shown)`.
    package static func phrase(for secret: Secret) -> String {
        "a string from \(secret.names.map { "${env:\($0)}" }.joined(separator: ", ")) (not shown)"
    }

    /// The issue with every value from the environment taken out of its message. At the
    /// secret's own pointer the value's description becomes ``phrase(for:)``; elsewhere (a
    /// container shown inline, a suggestion) the value is shown as written.
    package func redact(_ issue: SettingsIssue) -> SettingsIssue {
        guard !secrets.isEmpty else { return issue }
        var issue = issue
        issue.message = redact(issue.message, at: issue.pointer)
        return issue
    }

    package func redact(_ message: String, at pointer: String) -> String {
        var text = message
        // Longer values first, so that a value containing another is replaced whole.
        for secret in secrets.sorted(by: { $0.value.count > $1.value.count }) where !secret.value.isEmpty {
            let forms = Self.quotedForms(secret.value)
            if secret.pointer == pointer {
                for form in forms {
                    text = text.replacingOccurrences(of: form + " (string)", with: Self.phrase(for: secret))
                    text = text.replacingOccurrences(of: form, with: Self.phrase(for: secret))
                }
            } else {
                for form in forms {
                    text = text.replacingOccurrences(of: form, with: JSONValue.string(secret.written).serialized())
                }
            }
            // Whatever quoting a message used, the value itself must not survive (shorter values
            // would garble ordinary words; their quoted forms, the way messages show values,
            // are gone above).
            if secret.value.count >= 8 {
                text = text.replacingOccurrences(of: secret.value, with: "(not shown)")
                let escaped = String(JSONValue.string(secret.value).serialized().dropFirst().dropLast())
                if escaped != secret.value { text = text.replacingOccurrences(of: escaped, with: "(not shown)") }
            }
        }
        return text
    }

    /// The ways a validation message quotes a string: whole, or cut after 40 characters.
    package static func quotedForms(_ value: String) -> [String] {
        var forms = [JSONValue.string(value).serialized()]
        if value.count > 40 { forms.append(JSONValue.string(String(value.prefix(40)) + "…").serialized()) }
        return forms
    }

    package init() {}
}
