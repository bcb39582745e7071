import Foundation

/// The agent's shared memory as a process or task handler sees it (`context.memory`): named
/// JSON values, agent-wide or private to the workflow run a task run is a step of. Every
/// write raises a key's version by one; a write may expect a version (compare-and-set, 0: the
/// key must not exist) and is refused with ``ProcessContextError/Code/memoryConflict`` when the
/// key is at another. Keys are 1 to 256 bytes, values at most 256 KiB as JSON.
///
/// Calls block until the agent answers (a read is a lookup, a write waits for the commit):
/// from async code, fine for a handful per event; not for a hot loop.
public struct SharedMemory: Sendable {
    /// Whose keys.
    public enum Scope: Sendable, Equatable {
        /// The whole agent's.
        case agent
        /// The workflow run's this task run is a step of (a process, or a run that is no
        /// workflow step, has none: refused).
        case workflowRun
    }

    /// A key's value (JSON text) and version.
    public struct Entry: Sendable, Equatable {
        /// The key, as given to `entry`, `get` or `set`.
        public let key: String
        /// The value as compact JSON text.
        public let json: String
        /// 1 at the first write, one more at every write.
        public let version: Int

        /// The value decoded as `T`.
        public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
            try JSONDecoder().decode(T.self, from: Data(json.utf8))
        }
    }

    let host: HostBridge
    /// The run whose workflow scope ``Scope/workflowRun`` means (0: a process).
    let token: UInt64
    /// False once the process ended (the host's table is gone then).
    let isValid: @Sendable () -> Bool

    /// A key's entry, or nil when there is none.
    public func entry(_ key: String, scope: Scope = .agent) throws -> Entry? {
        let answer = try call(["command": "memory_get", "key": key], scope: scope, missingIsNil: true)
        return answer.flatMap { ($0["entry"] as? [String: Any]).flatMap(Self.entry) }
    }

    /// A key's value decoded as `T`, or nil when there is none.
    public func get<T: Decodable>(_ key: String, as type: T.Type = T.self, scope: Scope = .agent) throws -> T? {
        try entry(key, scope: scope)?.decode(T.self)
    }

    /// Writes `value` (encoded as JSON) at `key`; returns the key's new version. With
    /// `expectedVersion`, only if the key is at that version (0: does not exist).
    @discardableResult
    public func set<T: Encodable>(_ key: String, _ value: T, expectedVersion: Int? = nil, scope: Scope = .agent) throws -> Int {
        let data = try JSONEncoder().encode(value)
        return try set(key, json: String(decoding: data, as: UTF8.self), expectedVersion: expectedVersion, scope: scope)
    }

    /// Writes a value given as JSON text at `key`; returns the key's new version.
    @discardableResult
    public func set(_ key: String, json: String, expectedVersion: Int? = nil, scope: Scope = .agent) throws -> Int {
        guard let value = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) else {
            throw ProcessContextError("memory.set(\"\(key)\"): the value is not valid JSON")
        }
        var request: [String: Any] = ["command": "memory_set", "key": key, "value": value]
        if let expectedVersion { request["expected_version"] = expectedVersion }
        let answer = try call(request, scope: scope, missingIsNil: false)
        guard let version = (answer?["entry"] as? [String: Any])?["version"] as? Int else {
            throw ProcessContextError("memory.set(\"\(key)\"): the host answered without a version")
        }
        return version
    }

    /// Deletes `key`; false when there was none. With `expectedVersion`, only at that version.
    @discardableResult
    public func delete(_ key: String, expectedVersion: Int? = nil, scope: Scope = .agent) throws -> Bool {
        var request: [String: Any] = ["command": "memory_delete", "key": key]
        if let expectedVersion { request["expected_version"] = expectedVersion }
        return (try call(request, scope: scope, missingIsNil: false)?["deleted"] as? Bool) ?? false
    }

    /// Keys starting with `prefix`, in key order, with their values (at most `limit`, up to 1000).
    public func list(prefix: String = "", limit: Int = 100, scope: Scope = .agent) throws -> [Entry] {
        let answer = try call(["command": "memory_list", "prefix": prefix, "limit": max(1, min(limit, 1000))], scope: scope, missingIsNil: false)
        return ((answer?["entries"] as? [[String: Any]]) ?? []).compactMap(Self.entry)
    }

    private static func entry(_ object: [String: Any]) -> Entry? {
        guard let key = object["key"] as? String, let version = object["version"] as? Int, let value = object["value"],
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]) else { return nil }
        return Entry(key: key, json: String(decoding: data, as: UTF8.self), version: version)
    }

    /// Sends a memory command; the answer object, nil for a missing key when `missingIsNil`.
    private func call(_ request: [String: Any], scope: Scope, missingIsNil: Bool) throws -> [String: Any]? {
        guard isValid() else { throw CancellationError() }
        var request = request
        if scope == .workflowRun { request["scope"] = "run" }
        let body = try JSONSerialization.data(withJSONObject: request, options: [.fragmentsAllowed])
        let bytes = try host.memory(token: token, request: Array(body))
        guard let answer = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw ProcessContextError("shared memory: the host answered with something else than JSON")
        }
        if answer["ok"] as? Bool == true { return answer }
        let code = answer["code"] as? String ?? "failed"
        if code == "not_found", missingIsNil { return nil }
        let message = answer["error"] as? String ?? "the memory request was refused"
        switch code {
        case "conflict": throw ProcessContextError(code: .memoryConflict, message, currentVersion: answer["version"] as? Int)
        case "unavailable": throw ProcessContextError(code: .storeUnavailable, message)
        default: throw ProcessContextError(message)
        }
    }
}
