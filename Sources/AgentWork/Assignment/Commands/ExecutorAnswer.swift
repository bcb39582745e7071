import JSONSchema

/// `{"ok": true, "executor": …}`: one executor as `executor list` shows it.
package struct ExecutorAnswer: Encodable, Sendable {
    package let ok = true
    package var executor: JSONValue
}
