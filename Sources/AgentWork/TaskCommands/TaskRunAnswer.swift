import JSONSchema

/// The answer of the commands about one run: `{"ok": true, "run": …}` (see ``TaskRun/json``).
package struct TaskRunAnswer: Encodable, Sendable {
    package let ok = true
    package var run: JSONValue

    package init(_ run: TaskRun) { self.run = run.json }
    init(json: JSONValue) { run = json }
}
