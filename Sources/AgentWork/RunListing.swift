import AgentBase
import JSONSchema

/// How a list shows runs (`task runs`, `workflow runs`, `GET /api/runs`,
/// `GET /api/workflow-runs`): a member whose JSON text is longer than ``memberLimit`` bytes —
/// an input, an output, the variables or an error, each up to a MiB — is left out, and the
/// run's `"omitted"` names it: a run is listed in a few kilobytes a member however large it is;
/// `task show` and `workflow show` (`GET /api/runs/{id}`,
/// `GET /api/workflow-runs/{id}`) answer the whole run. A list stops once its runs come to
/// ``answerLimit`` bytes (its newest runs, then `"truncated": true`): a list of 10,000 runs with
/// every member just under the limit was 38 MB, written on the HTTP front's one thread.
///
/// The SQLite store keeps each run's record for lists beside the record itself (its `listed`
/// column, written only when a member is over twice that long: ``listed(_:length:)``), so
/// that a list parses no such member, and stops reading at ``readLimit``.
package enum RunListing {
    /// A member of a listed run whose JSON text is longer than this (bytes) is left out.
    package static let memberLimit = 4096

    /// The most bytes of JSON a list's runs come to.
    package static let answerLimit = ListAnswerSize.bytes

    /// The store leaves out of its record for lists only members longer than this: a member's
    /// stored form may be longer than its shown one (a signal's time as a number and its
    /// size), and a list from the store must show what a list from memory shows.
    package static let storedMemberLimit = 2 * memberLimit

    /// The note of a list that stopped at ``answerLimit``.
    package static let truncatedNote = "the list stops at 4 MiB of JSON: these are its newest runs; ask for fewer (limit) or filter by task or status"

    /// A store stops reading a list once the records it read come to this many bytes: twice
    /// the answer's, as a record's members up to ``storedMemberLimit`` are read and then left out.
    package static let readLimit = 2 * answerLimit

    /// The `"omitted"` member of a listed run, as the answer schemas describe it.
    package static let omittedSchema: JSONValue = [
        "type": "array", "items": ["type": "string"],
        "description": "Members left out of this list because their JSON text is longer than 4096 bytes (an input, output, variables or error), or out of an answer about one run because the input is 16 KiB or more; the run by its id (show, GET …/{id}) has them.",
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

    /// The runs of a list (shown, newest first) that fit in ``answerLimit``, and whether any
    /// was left out for it.
    package static func fitting(_ runs: some Sequence<JSONValue>) -> (runs: [JSONValue], truncated: Bool) {
        var kept: [JSONValue] = []
        var room = answerLimit
        for run in runs {
            guard let length = run.serializedLength(atMost: room - 1) else { return (kept, true) }
            room -= length + 1
            kept.append(run)
        }
        return (kept, false)
    }

    /// A listed run's error for a one-line view: its first `length` characters, or where it
    /// is when the list left it out; nil when it has none.
    package static func errorPreview(_ run: JSONValue, length: Int = 200) -> String? {
        if let error = run["error"]?.stringValue { return String(error.prefix(length)) }
        if run["omitted"]?.arrayValue?.contains("error") == true { return "(longer than 4 KiB: show the run for it)" }
        return nil
    }

    /// The record a store keeps for lists beside `record` (a run's `storedJSON`, whose text is
    /// `length` bytes long): nil when no member is longer than ``storedMemberLimit`` (lists
    /// read the record itself), else the record without those members, with `"omitted"` naming
    /// them and `"record_length"` the record's length in bytes, by which a store tells whether
    /// it is still the current record's. ``shown(_:omitted:)`` leaves out the shorter long ones.
    /// `omitting`: long members already left out of `record` (an input held as its text).
    package static func listed(_ record: JSONValue, length: Int, omitting: [String] = []) -> JSONValue? {
        guard length > storedMemberLimit, case .object(var object) = record else { return nil }
        let long = (object.filter { $0.value.serializedLength(atMost: storedMemberLimit) == nil }.map(\.key) + omitting).sorted()
        guard !long.isEmpty else { return nil }
        for name in long { object[name] = nil }
        object["omitted"] = .array(long.map(JSONValue.string))
        object["record_length"] = .number(JSONNumber(length))
        return .object(object)
    }

    /// A record read for a list (``listed(_:length:)``'s, or the record itself): the record,
    /// and the members left out of it.
    package static func split(_ value: JSONValue) -> (record: JSONValue, omitted: [String]) {
        guard case .object(var object) = value, let names = object["omitted"]?.arrayValue else { return (value, []) }
        object["omitted"] = nil
        object["record_length"] = nil
        return (.object(object), names.compactMap(\.stringValue))
    }
}
