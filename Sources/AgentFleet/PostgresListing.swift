#if Fleet
import AgentWork

/// How the fleet's stores list runs without reading their long members, as the SQLite store's
/// do: a list reads each run's record for lists (column `listed`, migration 11), or its record
/// when it has none, while the length the record for lists was made for (`listed_for`) is its
/// record's (which the server knows without reading the record). For a row written before, or
/// rewritten by an agent of an older version, the server leaves out each member longer than
/// ``RunListing/storedMemberLimit`` bytes and names it (`agent_listed_members`: the record read
/// as `json`, which keeps each member's text as written), or, when it cannot split the record,
/// sends it whole. Either way no agent receives an input, output or variables of a MiB for a list.
///
/// A list is ``select(_:)`` `FROM (SELECT *, ` ``fresh`` ` AS fresh FROM` the rows, newest
/// first, limited`) t` ``measured``: only the rows listed are read, as the limit is taken first.
enum PostgresListing {
    /// Whether a row's `listed` is its record's (a column of the rows listed, `fresh`).
    static var fresh: String { "(listed_for IS NOT NULL AND listed_for = octet_length(data))" }

    /// The select list: the text listed (a record for lists, a record without its long members
    /// or the record), the names of the members the server left out (text[], NULL when none),
    /// then `extra` columns of the row (`t`).
    static func select(_ extra: [String] = []) -> String {
        "SELECT CASE WHEN t.fresh THEN coalesce(t.listed, t.data) ELSE coalesce(l.kept, t.data) END, l.omitted"
            + extra.map { ", t.\($0)" }.joined()
    }

    /// What follows the rows listed (`t`): the members of each long record without a fresh
    /// `listed` measured, newest first.
    static var measured: String {
        let over = RunListing.storedMemberLimit
        return """
            LEFT JOIN LATERAL (
                SELECT * FROM agent_listed_members(t.data, \(over)) WHERE NOT t.fresh AND octet_length(t.data) > \(over)
            ) l ON l.omitted IS NOT NULL
            ORDER BY t.seq DESC
            """
    }
}
#endif
