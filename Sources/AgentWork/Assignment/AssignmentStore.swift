/// Where the assignment choices made at run time are kept across restarts: the strategies
/// (`task set-strategy`) and the drained executors. Keys: `strategy`, `strategy:<task>`,
/// `drain:<executor>`. Small on purpose (another store only needs these two operations).
package protocol AssignmentStore: AnyObject, Sendable {
    /// Every key and value (at start, before the loop runs).
    func load() throws -> [String: String]
    /// Sets (nil: removes) one key; returns at once (written off the loop).
    func save(key: String, value: String?)
}
