import AgentCore
import JSONSchema

/// Fills in the defaults a schema declares, so that every module (not only Swift ones, whose
/// SDK does the same) gets complete settings.
public enum SchemaDefaults {
    /// `value` with the `default` of every declared property that is missing, recursively
    /// through `properties` of nested objects.
    public static func apply(_ schema: JSONValue, to value: JSONValue) -> JSONValue {
        guard case .object(var object) = value, let properties = schema["properties"]?.objectValue else { return value }
        for (name, propertySchema) in properties {
            if let present = object[name] {
                object[name] = apply(propertySchema, to: present)
            } else if let fallback = propertySchema["default"] {
                object[name] = apply(propertySchema, to: fallback)
            }
        }
        return .object(object)
    }
}
