import JSONSchema

/// The answer of the commands about one run: `{"ok": true, "run": …}` (see ``TaskRun/json``),
/// a large input left out and named in the run's `"omitted"` (`task show` has it).
package struct TaskRunAnswer: Encodable, Sendable {
    package let ok = true
    package var run: JSONValue

    package init(_ run: TaskRun) { self.run = run.shown(withLargeInput: false) }
    init(json: JSONValue) { run = json }
}
