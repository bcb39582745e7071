#if Fleet
import AgentWork
import Foundation
import JSONSchema

/// How the fleet's stores list runs without reading their long members, as the SQLite store's
/// do: a list reads each run's record for lists (column `listed`, migration 11) while its
/// `record_length` is its record's length (which the server knows without reading the record);
/// for a row without one (written before, or rewritten by an agent of an older version), the
/// server leaves out each member longer than ``RunListing/storedMemberLimit`` bytes and names
/// it, reading the record as `json`, which keeps each member's text as written. Either way an
/// agent never receives nor parses an input, output or variables of a MiB to show a line.
///
/// A list is ``select(_:)`` `FROM (SELECT *, `` ``fresh`` `AS fresh FROM` the rows, newest
/// first, limited`) t` ``measured``: only the rows listed are read, as the limit is taken first.
struct PostgresListing<Run: Sendable> {
    /// Whether a row's record for lists is its record's (a column of the rows listed, `fresh`).
    static var fresh: String { "(listed IS NOT NULL AND (listed::json->>'record_length')::bigint = octet_length(data))" }

    /// The select list: the text listed (a record for lists, a record without its long members
    /// or the record), the names of the members the server left out (text[], NULL when none),
    /// then `extra` columns of the row (`t`).
    static func select(_ extra: [String] = []) -> String {
        "SELECT CASE WHEN t.fresh THEN t.listed ELSE coalesce(l.kept, t.data) END, l.omitted" + extra.map { ", t.\($0)" }.joined()
    }

    /// What follows the rows listed (`t`): the members of each record that has no fresh record
    /// for lists measured, newest first.
    static var measured: String {
        let over = RunListing.storedMemberLimit
        return """
            LEFT JOIN LATERAL (
                SELECT coalesce(json_object_agg(key, value) FILTER (WHERE octet_length(value::text) <= \(over)), '{}'::json)::text AS kept,
                    array_agg(key ORDER BY key) FILTER (WHERE octet_length(value::text) > \(over)) AS omitted
                FROM json_each(t.data::json) WHERE NOT t.fresh AND octet_length(t.data) > \(over)
            ) l ON l.omitted IS NOT NULL
            ORDER BY t.seq DESC
            """
    }

    /// Members no list shows, never named as left out.
    let unshown: Set<String>
    private var runs: [ListedRun<Run>] = []
    private var bytes = 0
    private var cut = false

    init(unshown: Set<String> = []) { self.unshown = unshown }

    /// Adds a row's run (`text` and `omitted`, the first two columns of ``select(_:)``) until
    /// the texts come to ``RunListing/readLimit`` bytes (the first always); the rows after it
    /// are passed over unparsed.
    mutating func add(_ text: String, omitted: [String]?, _ decode: (JSONValue) -> Run?) {
        guard !cut else { return }
        bytes += text.utf8.count
        if bytes > RunListing.readLimit, !runs.isEmpty {
            cut = true
            return
        }
        guard let value = try? JSONValue.parse(Data(text.utf8)) else { return }
        let (record, left) = RunListing.split(value)
        if let run = decode(record) {
            runs.append(ListedRun(run, omitted: (omitted ?? left).filter { !unshown.contains($0) }))
        }
    }

    var page: RunListPage<Run> { RunListPage(runs, cut: cut) }
}
#endif
