import AgentBase
import JSONSchema

/// The bounds of shared memory, checked before anything is handed to the store.
public enum MemoryLimits {
    /// A key: 1 to 256 bytes of UTF-8, no control characters.
    public static let keyBytes = 256
    /// A value: at most 256 KiB as compact JSON.
    public static let valueBytes = 256 << 10
    /// A run id in a scope: 1 to 200 bytes.
    public static let runIDBytes = 200
    /// A list answer stops after about this many bytes of values (then pages with `next`): an
    /// answer is built whole, so this bounds what a burst of list requests holds at once (180
    /// concurrent 4 MiB pages left the supervisor 56–115 MB larger).
    public static let listBytes = 1 << 20
    /// A list answer has at most this many entries.
    public static let listEntries = 1000
    /// Arrays and objects inside one another in a value, as in a run's input
    /// (``InputNesting``): a value of ~510 levels was accepted, then broke every reader of
    /// `memory get` and `memory list` (they take at most 512 levels, the answer's included).
    public static let valueDepth = InputNesting.deepest
    /// The schema `pattern` of keys and run ids: no control character (Unicode's Cc).
    public static let noControlCharacters = ControlCharacters.nonePattern

    /// Checks a key; the error says what is wrong and how to fix it.
    public static func check(key: String, scope: MemoryScope) throws(MemoryError) {
        if key.isEmpty { throw MemoryError(.invalid, "a memory key must not be empty", key: key, scope: scope, pointer: "/key") }
        if key.utf8.count > keyBytes {
            throw MemoryError(.invalid, "the memory key is \(key.utf8.count) bytes long; at most \(keyBytes) bytes (UTF-8) are allowed: use a shorter key",
                              key: String(key.prefix(40)) + "…", scope: scope, pointer: "/key")
        }
        if key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw MemoryError(.invalid, "a memory key must not contain control characters (newlines, tabs…)", key: key, scope: scope, pointer: "/key")
        }
        try check(scope: scope)
    }

    /// Checks a scope's run id.
    public static func check(scope: MemoryScope) throws(MemoryError) {
        guard let run = scope.runID else { return }
        if run.isEmpty || run.utf8.count > runIDBytes || run.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw MemoryError(.invalid, "a workflow run id must be 1 to \(runIDBytes) bytes without control characters", key: nil, scope: scope, pointer: "/run")
        }
    }

    /// Checks a value and gives its compact JSON text.
    public static func serialize(_ value: JSONValue, key: String, scope: MemoryScope) throws(MemoryError) -> String {
        if let path = InputNesting.pathBeyond(value, limit: valueDepth) {
            let pointer = "/value" + path.map { "/" + JSONPointer.escape($0) }.joined()
            throw MemoryError(.invalid, "the value nests arrays and objects more than \(valueDepth) levels deep (found a level \(valueDepth + 1) at \(pointer)); "
                              + "at most \(valueDepth) are accepted, so that every reader can take the entry back: flatten the value", key: key, scope: scope, pointer: pointer)
        }
        let text = value.serialized()
        if text.utf8.count > valueBytes {
            throw MemoryError(.tooLarge, "the value is \(text.utf8.count) bytes as JSON; a memory value may be at most \(valueBytes) bytes (256 KiB): keep large data in a file or split it over several keys",
                              key: key, scope: scope, pointer: "/value")
        }
        return text
    }

    /// Checks a whole write.
    public static func check(_ write: MemoryWrite) throws(MemoryError) {
        switch write.operation {
        case .delete:
            try check(key: write.key, scope: write.scope)
        case .put(let value):
            try check(key: write.key, scope: write.scope)
            _ = try serialize(value, key: write.key, scope: write.scope)
        }
        if let expected = write.expectedVersion, expected < 0 {
            throw MemoryError(.invalid, "the expected version must be 0 (the key must not exist) or more; found \(expected)", key: write.key, scope: write.scope,
                              pointer: "/expected_version")
        }
    }
}
