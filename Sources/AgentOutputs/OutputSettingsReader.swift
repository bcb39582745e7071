import AgentCore
import JSONSchema

/// Reads typed values out of one output object, with errors that name the key, what was
/// expected and what was found.
package struct OutputSettingsReader {
    package let object: JSONObject

    package func error(_ key: String, _ message: String) -> OutputConfigurationError {
        OutputConfigurationError(pointer: JSONPointer(tokens: [key]), message: message)
    }

    package func rejectUnknownKeys(allowed: Set<String>) throws(OutputConfigurationError) {
        for key in object.keys where !allowed.contains(key) {
            let known = allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            let type = object["type"]?.stringValue ?? ""
            throw error(key, "unknown property \"\(key)\" for a \(type) output; known: \(known)")
        }
    }

    package func string(_ key: String, required: Bool) throws(OutputConfigurationError) -> String? {
        guard let value = object[key] else {
            if required { throw OutputConfigurationError(pointer: JSONPointer(), message: "missing required property \"\(key)\"") }
            return nil
        }
        guard case .string(let text) = value else { throw error(key, "expected a string, found \(Self.describe(value))") }
        return text
    }

    package func integer(_ key: String, default fallback: Int, minimum: Int, maximum: Int) throws(OutputConfigurationError) -> Int {
        guard let value = object[key] else { return fallback }
        guard case .number(let number) = value, number.isInteger else {
            throw error(key, "expected an integer ≥ \(minimum) and ≤ \(maximum), found \(Self.describe(value))")
        }
        guard let integer = number.intValue, integer <= maximum else { throw error(key, "expected an integer ≤ \(maximum), found \(number)") }
        guard integer >= minimum else { throw error(key, "expected an integer ≥ \(minimum), found \(number)") }
        return integer
    }

    package func number(
        _ key: String, default fallback: Double, minimum: Double, exclusive: Bool = false, maximum: Double
    ) throws(OutputConfigurationError) -> Double {
        let lower = "\(exclusive ? ">" : "≥") \(minimum.compactText)"
        guard let value = object[key] else { return fallback }
        guard case .number(let number) = value else {
            throw error(key, "expected a number \(lower) and ≤ \(maximum.compactText), found \(Self.describe(value))")
        }
        let double = number.doubleValue
        guard double <= maximum else { throw error(key, "expected a number ≤ \(maximum.compactText), found \(number)") }
        guard exclusive ? double > minimum : double >= minimum else { throw error(key, "expected a number \(lower), found \(number)") }
        return double
    }

    /// `kinds`: a non-empty array of `"event"` and `"message"`; both when absent.
    package func kinds() throws(OutputConfigurationError) -> Set<OutputRecord.Kind> {
        guard let value = object["kinds"] else { return Set(OutputRecord.Kind.allCases) }
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw error("kinds", "expected a non-empty array of \"event\" and \"message\", found \(Self.describe(value))")
        }
        var kinds: Set<OutputRecord.Kind> = []
        for (index, element) in elements.enumerated() {
            guard let text = element.stringValue, let kind = OutputRecord.Kind(rawValue: text) else {
                throw OutputConfigurationError(
                    pointer: JSONPointer(tokens: ["kinds", String(index)]),
                    message: "expected \"event\" or \"message\", found \(Self.describe(element))"
                )
            }
            kinds.insert(kind)
        }
        return kinds
    }

    package static func describe(_ value: JSONValue) -> String {
        switch value {
        case .object, .array: value.typeName
        default: "\(value.serialized()) (\(value.typeName))"
        }
    }
}
