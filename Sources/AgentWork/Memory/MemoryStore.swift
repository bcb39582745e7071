import Foundation
import JSONSchema

/// Shared memory: named JSON values that workflows, processes and task handlers read and
/// write, agent-wide or private to one workflow run. The embedded SQLite store
/// (``SQLiteMemoryStore``) for one agent; a fleet's shared database (AgentFleet's
/// `PostgresMemoryStore`) for all its agents, so the protocol is small and says nothing of SQL.
///
/// Every key carries a version: 1 when it is first written, one more at every write. A write
/// may name the version it expects (compare-and-set): `0` means "the key must not exist";
/// another version than the stored one refuses the write with ``MemoryError/Code/conflict``.
///
/// Writes are committed in order with the store's other writes (after whatever was handed
/// over before them) and `done` is called once they are committed or refused; they return at
/// once, so the supervisor's loop may call them. Reads may block briefly: call them off the loop.
package protocol MemoryStore: AnyObject, Sendable {
    /// One key's entry, or nil when there is none.
    func get(_ key: String, scope: MemoryScope) throws(MemoryError) -> MemoryEntry?
    /// A scope's entries in key order: keys starting with `prefix`, after the key `after`
    /// (paging), at most `limit` of them and about ``MemoryLimits/listBytes`` of values.
    func list(scope: MemoryScope, prefix: String, after: String?, limit: Int) throws(MemoryError) -> MemoryPage
    /// Writes `write` (put or delete); `done` gets the entry as written (for a delete, the
    /// entry removed, or nil when there was none) or why not. Returns at once.
    func commit(_ write: MemoryWrite, done: @escaping @Sendable (Result<MemoryEntry?, MemoryError>) -> Void)
}

extension MemoryStore {
    /// Puts `value` at `key` and waits for the commit.
    package func put(_ key: String, value: JSONValue, scope: MemoryScope, expectedVersion: Int? = nil) async throws(MemoryError) -> MemoryEntry {
        let write = MemoryWrite(scope: scope, key: key, operation: .put(value), expectedVersion: expectedVersion)
        let result = await withCheckedContinuation { continuation in commit(write) { continuation.resume(returning: $0) } }
        switch result {
        case .success(let entry?): return entry
        case .success(nil): throw MemoryError(.unavailable, "the store wrote no entry for \(key)", key: key, scope: scope)
        case .failure(let error): throw error
        }
    }

    /// Deletes `key` and waits for the commit: the entry removed, or nil when there was none.
    package func delete(_ key: String, scope: MemoryScope, expectedVersion: Int? = nil) async throws(MemoryError) -> MemoryEntry? {
        let write = MemoryWrite(scope: scope, key: key, operation: .delete, expectedVersion: expectedVersion)
        let result = await withCheckedContinuation { continuation in commit(write) { continuation.resume(returning: $0) } }
        return try result.get()
    }
}

/// Whose a key is: the whole agent's, or one workflow run's: written only while the run
/// exists, and deleted with it by the retention (`store.retention`).
public enum MemoryScope: Hashable, Sendable, CustomStringConvertible {
    case agent
    case workflowRun(String)

    /// As stored and shown: `agent`, or `run:<id>`.
    public var description: String {
        switch self {
        case .agent: return "agent"
        case .workflowRun(let id): return "run:\(id)"
        }
    }

    /// Reads ``description`` back; nil when it is neither form.
    public init?(_ text: String) {
        if text == "agent" {
            self = .agent
        } else if text.hasPrefix("run:"), text.count > 4 {
            self = .workflowRun(String(text.dropFirst(4)))
        } else {
            return nil
        }
    }

    /// The workflow run, for a run's scope.
    public var runID: String? {
        if case .workflowRun(let id) = self { return id }
        return nil
    }
}

/// One key's value with its version.
public struct MemoryEntry: Sendable, Equatable {
    public var scope: MemoryScope
    public var key: String
    public var value: JSONValue
    /// 1 at the first write, one more at every write.
    public var version: Int
    /// When it was last written (seconds since the Unix epoch).
    public var updated: Double

    package init(scope: MemoryScope, key: String, value: JSONValue, version: Int, updated: Double) {
        self.scope = scope
        self.key = key
        self.value = value
        self.version = version
        self.updated = updated
    }

    /// As the memory commands show it.
    public var json: JSONValue {
        var object: JSONObject = ["key": .string(key), "scope": .string(scope.description), "version": .number(JSONNumber(version)),
                                  "updated": .string(TaskRun.iso(updated)), "value": value]
        if let run = scope.runID { object["run"] = .string(run) }
        return .object(object)
    }
}

/// A page of ``MemoryStore/list(scope:prefix:after:limit:)``.
public struct MemoryPage: Sendable, Equatable {
    public var entries: [MemoryEntry]
    /// Pass as `after` for the next page; nil when this is the last one.
    public var next: String?

    package init(entries: [MemoryEntry], next: String?) {
        self.entries = entries
        self.next = next
    }
}

/// A change handed to ``MemoryStore/commit(_:done:)``.
public struct MemoryWrite: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        case put(JSONValue)
        case delete
    }

    public var scope: MemoryScope
    public var key: String
    public var operation: Operation
    /// Compare-and-set: the version the key must have (0: must not exist); nil: any.
    public var expectedVersion: Int?

    public init(scope: MemoryScope, key: String, operation: Operation, expectedVersion: Int? = nil) {
        self.scope = scope
        self.key = key
        self.operation = operation
        self.expectedVersion = expectedVersion
    }
}
