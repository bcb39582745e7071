import JSONSchema

/// The `wait_event` steps waiting, indexed so that an event costs a dictionary look-up, not a
/// check of every waiting run: by event type, then by the values of the `const` members of
/// each wait's resolved `where` (`{"properties": {"order": {"const": 7}}}` → `/order` = 7).
/// The values are the key as JSON values, hashed as JSON compares them (numbers by value, object
/// members in any order) — the canonical JSON of the const members, without writing it out.
///
/// A look-up only narrows: each candidate's whole condition is still checked. It is exact
/// because a `const` under a chain of `properties` is a necessary condition — an event whose
/// value there differs cannot pass. An event that lacks one of the values passes such a
/// schema unless the schema requires it (`required` with `"type": "object"` at every level):
/// then the group's waits are checked one by one, or skipped when they require it. Waits
/// whose `where` has no const member (or none at all) are checked one by one.
package struct WaitIndex {
    /// One waiting step.
    package struct Wait {
        package var run: String
        package var step: String
        /// The resolved `where`, compiled (nil: any event of the type).
        package var condition: JSONSchemaValidator?

        package init(run: String, step: String, condition: JSONSchemaValidator?) {
            self.run = run
            self.step = step
            self.condition = condition
        }
    }

    /// A waiting step's identity.
    struct Key: Hashable {
        var run: String
        var step: String
    }

    /// Which const members a wait has: their paths (sorted) and, for each, whether an event
    /// without it fails the wait's schema.
    struct Signature: Hashable {
        var paths: [[String]]
        var required: [Bool]
    }

    /// The waits of one type.
    private struct TypeWaits {
        /// Waits with const members: by signature, then by the values (in the signature's order).
        var keyed: [Signature: [[JSONValue]: Set<Key>]] = [:]
        /// Waits without: each checked against each event.
        var scanned: Set<Key> = []
        var count = 0
    }

    private struct Entry {
        var type: String
        var wait: Wait
        var signature: Signature?
        var values: [JSONValue]
        /// Arming order: waits are offered an event in the order they started waiting.
        var order: Int
    }

    private var byType: [String: TypeWaits] = [:]
    private var entries: [Key: Entry] = [:]
    private var armed = 0

    package init() {}

    /// The event types some step waits for.
    package var types: [String] { Array(byType.keys) }
    package var count: Int { entries.count }

    package func contains(run: String, step: String) -> Bool { entries[Key(run: run, step: step)] != nil }

    /// Adds a waiting step for `type`, `where` its resolved condition (as written, for its const
    /// members). Replaces the step's earlier wait, if any. True when `type` is new.
    @discardableResult
    package mutating func add(_ wait: Wait, type: String, where condition: JSONValue?) -> Bool {
        _ = remove(run: wait.run, step: wait.step)
        let key = Key(run: wait.run, step: wait.step)
        let members = condition.map { Self.constMembers(of: $0) } ?? []
        let isNew = byType[type] == nil
        armed += 1
        var entry = Entry(type: type, wait: wait, signature: nil, values: [], order: armed)
        if members.isEmpty {
            byType[type, default: TypeWaits()].scanned.insert(key)
        } else {
            let sorted = members.sorted { $0.path.lexicographicallyPrecedes($1.path) }
            let signature = Signature(paths: sorted.map(\.path), required: sorted.map(\.required))
            entry.signature = signature
            entry.values = sorted.map(\.value)
            byType[type, default: TypeWaits()].keyed[signature, default: [:]][entry.values, default: []].insert(key)
        }
        byType[type]!.count += 1
        entries[key] = entry
        return isNew
    }

    /// Removes a step's wait. The type it waited for when no step waits for it any more, else nil.
    package mutating func remove(run: String, step: String) -> String? {
        let key = Key(run: run, step: step)
        // Taken out of the dictionary while changed: a copy left in it would make the change
        // copy the whole set of the type's waits (5,000 runs woken by one event: quadratic).
        guard let entry = entries.removeValue(forKey: key), var waits = byType.removeValue(forKey: entry.type) else { return nil }
        if let signature = entry.signature {
            waits.keyed[signature]?[entry.values]?.remove(key)
            if waits.keyed[signature]?[entry.values]?.isEmpty == true { waits.keyed[signature]?[entry.values] = nil }
            if waits.keyed[signature]?.isEmpty == true { waits.keyed[signature] = nil }
        } else {
            waits.scanned.remove(key)
        }
        waits.count -= 1
        if waits.count == 0 {
            byType[entry.type] = nil
            return entry.type
        }
        byType[entry.type] = waits
        return nil
    }

    /// The waits an event of `type` with `payload` may release (each condition still to be
    /// checked), in the order they started waiting.
    package func candidates(type: String, payload: JSONValue) -> [Wait] {
        guard let waits = byType[type] else { return [] }
        var found: [Key] = Array(waits.scanned)
        for (signature, groups) in waits.keyed {
            var values: [JSONValue] = []
            var absentRequired = false, absentOptional = false
            for (index, path) in signature.paths.enumerated() {
                if let value = Self.value(at: path, in: payload) {
                    values.append(value)
                } else if signature.required[index] {
                    absentRequired = true
                    break
                } else {
                    absentOptional = true
                }
            }
            if absentRequired { continue }
            if absentOptional {
                for keys in groups.values { found += keys }
            } else if let keys = groups[values] {
                found += keys
            }
        }
        return found.compactMap { entries[$0] }.sorted { $0.order < $1.order }.map(\.wait)
    }

    // MARK: Const members

    /// The `const` members of `schema` reached through `properties` only (each a necessary
    /// condition), with whether an event lacking the member fails the schema.
    static func constMembers(of schema: JSONValue) -> [(path: [String], value: JSONValue, required: Bool)] {
        var found: [(path: [String], value: JSONValue, required: Bool)] = []
        func walk(_ node: JSONValue, _ path: [String], _ required: Bool, depth: Int) {
            guard depth < 32, let object = node.objectValue else { return }
            if let value = object["const"] { found.append((path, value, required)) }
            guard let properties = object["properties"]?.objectValue else { return }
            let isObject = object["type"] == "object" || object["type"]?.arrayValue == ["object"]
            let names = Set((object["required"]?.arrayValue ?? []).compactMap(\.stringValue))
            for (name, child) in properties {
                walk(child, path + [name], required && isObject && names.contains(name), depth: depth + 1)
            }
        }
        walk(schema, [], true, depth: 0)
        return found
    }

    /// The value at `path` (object members) in `value`, nil when a member is missing or a
    /// value on the way is no object.
    static func value(at path: [String], in value: JSONValue) -> JSONValue? {
        var current = value
        for name in path {
            guard let next = current.objectValue?[name] else { return nil }
            current = next
        }
        return current
    }
}
