/// An ordered JSON object: members keep document order, while equality and hashing ignore
/// order, as JSON requires.
///
/// Small objects are searched linearly (faster than hashing for a handful of keys); larger ones
/// also keep a key index.
public struct JSONObject: Hashable, Sendable {
    /// One member of an object.
    struct Entry: Sendable {
        var key: String
        var value: JSONValue
    }

    private(set) var entries: [Entry]
    private var index: [ExactString: Int]?

    private static let indexThreshold = 12

    /// Creates an empty object.
    public init() {
        entries = []
    }

    /// Creates an object from key/value pairs in order; for a repeated key the last value wins
    /// (at the position where the key first appeared).
    public init(_ pairs: [(String, JSONValue)]) {
        entries = []
        entries.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// The keys in document order.
    public var keys: [String] { entries.map(\.key) }

    /// The values in document order.
    public var values: [JSONValue] { entries.map(\.value) }

    /// The number of members.
    public var count: Int { entries.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { entries.isEmpty }

    /// Gets a member's value, or sets it (appending new keys at the end); setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let i = position(of: key) else { return nil }
            return entries[i].value
        }
        set {
            if let i = position(of: key) {
                if let newValue {
                    entries[i].value = newValue
                } else {
                    entries.remove(at: i)
                    rebuildIndex()
                }
            } else if let newValue {
                appendNew(key, newValue)
            }
        }
    }

    /// Appends a member whose key the caller knows is not there yet (the parser, which has
    /// just looked for it).
    mutating func appendNew(_ key: String, _ value: JSONValue) {
        entries.append(Entry(key: key, value: value))
        if index != nil {
            index![ExactString(key)] = entries.count - 1
        } else if entries.count > JSONObject.indexThreshold {
            rebuildIndex()
        }
    }

    /// Whether the object has a member named `key`.
    public func contains(key: String) -> Bool {
        position(of: key) != nil
    }

    /// The position of `key` in document order.
    func position(of key: String) -> Int? {
        if let index { return index[ExactString(key)] }
        for i in entries.indices where entries[i].key.isExactlyEqual(to: key) { return i }
        return nil
    }

    private mutating func rebuildIndex() {
        guard entries.count > JSONObject.indexThreshold else {
            index = nil
            return
        }
        var map: [ExactString: Int] = [:]
        map.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() { map[ExactString(entry.key)] = i }
        index = map
    }

    /// Objects are equal when they have the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for entry in lhs.entries {
            guard let other = rhs[entry.key], other == entry.value else { return false }
        }
        return true
    }

    /// Hashes consistently with `==`, independent of member order.
    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine per-member hashes with a commutative operation.
        var combined = 0
        for entry in entries {
            var member = Hasher()
            entry.key.hashExactly(into: &member)
            member.combine(entry.value)
            combined = combined &+ member.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(combined)
    }
}

extension JSONObject: Sequence {
    /// Iterates members in document order.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Entry]>

        /// The next member, or `nil` at the end.
        public mutating func next() -> (key: String, value: JSONValue)? {
            guard let entry = base.next() else { return nil }
            return (entry.key, entry.value)
        }
    }

    /// An iterator over `(key, value)` members in document order.
    public func makeIterator() -> Iterator {
        Iterator(base: entries.makeIterator())
    }

    /// The number of members.
    public var underestimatedCount: Int { entries.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Creates an object from a dictionary literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text of the object.
    public var description: String { JSONValue.object(self).serialized() }
}
