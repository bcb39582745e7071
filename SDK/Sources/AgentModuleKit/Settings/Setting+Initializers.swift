// The initializers of each kind of setting: `init(wrappedValue:...)` is the one with a default
// (`@Setting(...) var x = 5`), the other the one without (required, or nil if optional).
// `key` is the JSON key; nil: the property's name in snake_case.

extension Setting where Value: NumberSetting {
    /// A number with a default.
    public init(wrappedValue: Value, _ key: String? = nil, minimum: Value.Bound? = nil, maximum: Value.Bound? = nil,
                exclusiveMinimum: Value.Bound? = nil, exclusiveMaximum: Value.Bound? = nil, description: String? = nil) {
        self.init(value: wrappedValue, key: key, description: description,
                  bounds: Value.bounds(minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, exclusiveMaximum: exclusiveMaximum))
    }

    /// A required number (or, if optional, nil when absent).
    public init(_ key: String? = nil, minimum: Value.Bound? = nil, maximum: Value.Bound? = nil,
                exclusiveMinimum: Value.Bound? = nil, exclusiveMaximum: Value.Bound? = nil, description: String? = nil) {
        self.init(value: nil, key: key, description: description,
                  bounds: Value.bounds(minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, exclusiveMaximum: exclusiveMaximum))
    }
}

extension Setting where Value: TextSetting {
    /// A string with a default; `oneOf` lists the allowed values.
    public init(wrappedValue: Value, _ key: String? = nil, minLength: Int? = nil, maxLength: Int? = nil,
                pattern: String? = nil, format: String? = nil, oneOf: [String]? = nil, description: String? = nil) {
        self.init(value: wrappedValue, key: key, description: description,
                  bounds: .string(minLength: minLength, maxLength: maxLength, pattern: pattern, format: format, oneOf: oneOf))
    }

    /// A required string (or, if optional, nil when absent).
    public init(_ key: String? = nil, minLength: Int? = nil, maxLength: Int? = nil,
                pattern: String? = nil, format: String? = nil, oneOf: [String]? = nil, description: String? = nil) {
        self.init(value: nil, key: key, description: description,
                  bounds: .string(minLength: minLength, maxLength: maxLength, pattern: pattern, format: format, oneOf: oneOf))
    }
}

extension Setting where Value: ListSetting {
    /// An array with a default; `each` bounds its items, e.g. `.string(minLength: 1)`.
    public init(wrappedValue: Value, _ key: String? = nil, minItems: Int? = nil, maxItems: Int? = nil,
                uniqueItems: Bool = false, each: SettingBounds = .none, description: String? = nil) {
        self.init(value: wrappedValue, key: key, description: description,
                  bounds: .array(minItems: minItems, maxItems: maxItems, uniqueItems: uniqueItems, each: each))
    }

    /// A required array (or, if optional, nil when absent).
    public init(_ key: String? = nil, minItems: Int? = nil, maxItems: Int? = nil,
                uniqueItems: Bool = false, each: SettingBounds = .none, description: String? = nil) {
        self.init(value: nil, key: key, description: description,
                  bounds: .array(minItems: minItems, maxItems: maxItems, uniqueItems: uniqueItems, each: each))
    }
}

extension Setting where Value: PlainSetting {
    /// A boolean, enum or nested declaration with a default.
    public init(wrappedValue: Value, _ key: String? = nil, description: String? = nil) {
        self.init(value: wrappedValue, key: key, description: description, bounds: .none)
    }

    /// A required boolean, enum or nested declaration (or, if optional, nil when absent).
    public init(_ key: String? = nil, description: String? = nil) {
        self.init(value: nil, key: key, description: description, bounds: .none)
    }
}
