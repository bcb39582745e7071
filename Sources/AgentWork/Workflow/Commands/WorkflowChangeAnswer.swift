import JSONSchema

/// What a definition command answers: `settings_change`'s answer (`changed`, `path`, `hash`,
/// what the reload kept, restarted, started, stopped…) and the workflow's name.
package struct WorkflowChangeAnswer: Encodable, Sendable {
    /// `settings_change`'s answer, `ok` included.
    package var change: JSONObject
    package var workflow: String

    package init(change: JSONObject, workflow: String) {
        self.change = change
        self.workflow = workflow
    }

    package func encode(to encoder: any Encoder) throws {
        var object = change
        object["workflow"] = .string(workflow)
        try JSONValue.object(object).encode(to: encoder)
    }
}
