import Foundation

/// Replaces `${env:NAME}` references in settings strings with the values of environment
/// variables, so that secrets (tokens in webhook headers or URLs) stay out of settings files.
package enum EnvironmentReferences {
    /// Why a string could not be resolved.
    package enum Failure: Error, Equatable {
        /// `${env:NAME}` names a variable that is not set.
        case missing(String)
        /// `${env:` without its closing brace, or with an empty name.
        case malformed(String)

        package var message: String {
            switch self {
            case .missing(let name): "environment variable \(name) is not set (referenced as ${env:\(name)})"
            case .malformed(let text): "malformed environment reference in \"\(text)\"; expected ${env:NAME}"
            }
        }
    }

    private static let opening = "${env:"

    /// `text` with every `${env:NAME}` replaced by the variable's value (an empty value is
    /// kept). Anything else, including other `${…}` forms, is left as written.
    package static func resolve(_ text: String, environment: [String: String]) throws(Failure) -> String {
        guard text.contains(opening) else { return text }
        var result = ""
        var rest = text[...]
        while let start = rest.range(of: opening) {
            result += rest[..<start.lowerBound]
            let afterOpening = rest[start.upperBound...]
            guard let close = afterOpening.firstIndex(of: "}") else { throw .malformed(text) }
            let name = String(afterOpening[..<close])
            guard !name.isEmpty else { throw .malformed(text) }
            guard let value = environment[name] else { throw .missing(name) }
            result += value
            rest = afterOpening[afterOpening.index(after: close)...]
        }
        return result + rest
    }

    /// The non-empty value of each variable `text` refers to, mapped to its reference
    /// (`"${env:NAME}"`), so that messages can show the reference instead of the value.
    package static func values(in text: String, environment: [String: String]) -> [String: String] {
        var values: [String: String] = [:]
        var rest = text[...]
        while let start = rest.range(of: opening), let close = rest[start.upperBound...].firstIndex(of: "}") {
            let name = String(rest[start.upperBound..<close])
            if let value = environment[name], !value.isEmpty { values[value] = "${env:\(name)}" }
            rest = rest[rest.index(after: close)...]
        }
        return values
    }

    /// Whether `text` refers to the environment at all (used to keep resolved secrets out of
    /// names shown in logs and status).
    package static func containsReference(_ text: String) -> Bool {
        text.contains(opening)
    }
}
