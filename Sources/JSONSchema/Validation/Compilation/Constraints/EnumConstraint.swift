/// `enum`: small lists are scanned, large ones hashed.
struct EnumConstraint {
    let values: [JSONValue]
    let lookup: Set<JSONValue>?

    init(_ values: [JSONValue]) {
        self.values = values
        lookup = values.count > 8 ? Set(values) : nil
    }

    func contains(_ value: JSONValue) -> Bool {
        if let lookup { return lookup.contains(value) }
        return values.contains(value)
    }
}
