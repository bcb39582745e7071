import JSONSchema

/// Why a memory operation was refused.
public struct MemoryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// A bad key, scope or version.
        case invalid
        /// The value is larger than ``MemoryLimits/valueBytes``.
        case tooLarge = "too_large"
        /// Compare-and-set: the key's version is not the expected one.
        case conflict
        /// The store is off, or cannot be read or written now.
        case unavailable
        /// A write to the keys of a workflow run that does not exist (never did, or was
        /// deleted by the retention with its keys).
        case notFound = "not_found"
    }

    public var code: Code
    /// What is wrong and how to fix it.
    public var message: String
    public var key: String?
    public var scope: MemoryScope?
    /// For a conflict: the key's version now (0: it does not exist).
    public var currentVersion: Int?
    /// The JSON pointer of the request member at fault (`/key`, `/value/a/0`), when one is.
    public var pointer: String?

    public init(_ code: Code, _ message: String, key: String?, scope: MemoryScope?, currentVersion: Int? = nil, pointer: String? = nil) {
        self.code = code
        self.message = message
        self.key = key
        self.scope = scope
        self.currentVersion = currentVersion
        self.pointer = pointer
    }

    /// The refusal of `write`, which expected another version than the key's (`found`, 0:
    /// it does not exist): every store words it the same.
    package static func conflict(_ write: MemoryWrite, found version: Int) -> MemoryError {
        let expected = write.expectedVersion ?? 0
        let found = version == 0 ? "it does not exist" : "it is at version \(version)"
        let wanted = expected == 0 ? "not to exist" : "to be at version \(expected)"
        return MemoryError(.conflict, "the key was expected \(wanted) but \(found): read it again and retry",
                           key: write.key, scope: write.scope, currentVersion: version)
    }

    /// The refusal of `write`, a put in the scope of a workflow run that does not exist: every
    /// store words it the same.
    package static func noRun(_ write: MemoryWrite) -> MemoryError { noRun(key: write.key, scope: write.scope) }

    /// The refusal of a list in the scope of a workflow run that does not exist (a put's too).
    package static func noRun(key: String?, scope: MemoryScope) -> MemoryError {
        let run = scope.runID ?? ""
        return MemoryError(.notFound, "there is no workflow run \"\(run)\" in the store (a run's keys exist only while its run is kept: a finished run goes with its keys when the retention deletes it; the agent-wide keys need no run)",
                           key: key, scope: scope, pointer: "/run")
    }

    /// The refusal when the agent has no shared memory (the store is off).
    package static let storeOff = MemoryError(
        .unavailable, "shared memory lives in the store, and the store is off (\"store\": {\"enabled\": false}) or could not be opened",
        key: nil, scope: nil)

    public var description: String {
        var text = message
        if let key { text += " (key \"\(key)\"" + (scope.map { " in \($0)" } ?? "") + ")" }
        return text
    }
}
