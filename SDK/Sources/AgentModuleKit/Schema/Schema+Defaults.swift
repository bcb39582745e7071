import Foundation

extension Schema {
    /// Fills in the `default` of every declared property missing from `value`, recursively
    /// through nested objects, so that `Settings` can use plain non-optional fields.
    func applyingDefaults(to value: Any) -> Any {
        guard !properties.isEmpty, var object = value as? [String: Any] else { return value }
        for (name, schema) in properties {
            if let present = object[name] {
                object[name] = schema.applyingDefaults(to: present)
            } else if let fallback = schema.defaultValue {
                object[name] = schema.applyingDefaults(to: fallback.foundationValue)
            }
        }
        return object
    }
}

extension Schema {
    /// This schema with `value` (encoded as JSON) as its `default`, e.g. for arrays of objects:
    /// `.array(of: rule).defaulting(to: [Rule(metric: "cpu_percent", above: 90)])`.
    public func defaulting(to value: some Encodable) -> Schema {
        var copy = self
        if let data = try? JSONEncoder().encode(value),
           let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) {
            copy.defaultValue = JSONText(foundation: object)
        }
        return copy
    }
}

extension Schema {
    /// Whether a property at any depth declares a default: when none does, a value decodes
    /// straight from its JSON, without the round trip through Foundation objects that filling
    /// defaults in takes (most of a no-op task's cost in its worker).
    var declaresPropertyDefaults: Bool {
        properties.contains { $0.1.defaultValue != nil || $0.1.declaresPropertyDefaults }
    }
}
