import JSONSchema

/// How a list shows runs (`task runs`, `workflow runs`, `GET /api/runs`,
/// `GET /api/workflow-runs`): a member whose JSON text is longer than ``memberLimit`` bytes —
/// an input, an output, the variables or an error, each up to a MiB — is left out, and the
/// run's `"omitted"` names it. A list of a hundred runs then stays within a few hundred
/// kilobytes however large the runs; `task show` and `workflow show` (`GET /api/runs/{id}`,
/// `GET /api/workflow-runs/{id}`) answer the whole run.
///
/// The SQLite store keeps each run's record for lists beside the record itself (its `listed`
/// column, written only when a member is that long: ``listed(_:length:)``), so that a list
/// reads and parses no long member at all.
package enum RunListing {
    /// A member of a listed run whose JSON text is longer than this (bytes) is left out.
    package static let memberLimit = 4096

    /// The `"omitted"` member of a listed run, as the answer schemas describe it.
    package static let omittedSchema: JSONValue = [
        "type": "array", "items": ["type": "string"],
        "description": "Members left out of this list because their JSON text is longer than 4096 bytes (an input, output, variables or error); the run by its id (show, GET …/{id}) has them.",
    ]

    /// `run` (a run's `json`) as a list shows it. `omitted`: the members the store already
    /// left out (``split(_:)``); the others are measured here, each at most ``memberLimit``
    /// bytes' worth of work.
    package static func shown(_ run: JSONValue, omitted: [String] = []) -> JSONValue {
        guard case .object(var object) = run else { return run }
        var names = Set(omitted)
        for (name, value) in object where value.serializedLength(atMost: memberLimit) == nil { names.insert(name) }
        guard !names.isEmpty else { return run }
        for name in names { object[name] = nil }
        object["omitted"] = .array(names.sorted().map(JSONValue.string))
        return .object(object)
    }

    /// The record a store keeps for lists beside `record` (a run's `storedJSON`, whose text is
    /// `length` bytes long): nil when no member is longer than ``memberLimit`` (lists read the
    /// record itself), else the record without those members and with `"omitted"` naming them.
    package static func listed(_ record: JSONValue, length: Int) -> JSONValue? {
        guard length > memberLimit, case .object(var object) = record else { return nil }
        let long = object.filter { $0.value.serializedLength(atMost: memberLimit) == nil }.map(\.key).sorted()
        guard !long.isEmpty else { return nil }
        for name in long { object[name] = nil }
        object["omitted"] = .array(long.map(JSONValue.string))
        return .object(object)
    }

    /// A record read for a list (``listed(_:length:)``'s, or the record itself): the record,
    /// and the members left out of it.
    package static func split(_ value: JSONValue) -> (record: JSONValue, omitted: [String]) {
        guard case .object(var object) = value, let names = object["omitted"]?.arrayValue else { return (value, []) }
        object["omitted"] = nil
        return (.object(object), names.compactMap(\.stringValue))
    }
}
