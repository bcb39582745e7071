import Mustache

/// The subject and body of notification emails: mustache templates rendered as plain text
/// (no HTML escaping) with the keys of ``TaskNotification/templateContext``.
package enum NotificationTemplates {
    /// `[nightly@db1] task backup failed (run 01J…, attempt 3 of 3)`.
    package static let defaultSubject =
        "[{{agent}}@{{host}}] task {{task}} {{status}}{{#will_retry}}, will retry{{/will_retry}} (run {{run_id}}, attempt {{attempt}} of {{max_attempts}})"

    package static let defaultBody = """
        Task {{task}} {{status}}{{#will_retry}}; attempt {{next_attempt}} follows{{/will_retry}}.

        Task:      {{task}}{{#description}} ({{description}}){{/description}}
        Run:       {{run_id}}
        Attempt:   {{attempt}} of {{max_attempts}}
        Status:    {{status}}
        Time:      {{time}}
        Agent:     {{agent}} on {{host}}
        {{#exit_code}}
        Exit code: {{exit_code}}
        {{/exit_code}}
        {{#signal}}
        Signal:    {{signal}}
        {{/signal}}
        {{#error}}

        Error:
        {{error}}
        {{/error}}
        {{#stderr_tail}}

        Last lines of stderr:
        {{stderr_tail}}
        {{/stderr_tail}}

        --
        Sent by AgentRuntime (`agent-control task show {{run_id}}` for the whole run).

        """

    /// Compiles `text` as plain text. The pragma is put on the template's first line, so that
    /// the parser's line numbers in errors stay those of the text as written.
    package static func compile(_ text: String) throws -> MustacheTemplate {
        try MustacheTemplate(string: pragma + text)
    }

    private static let pragma = "{{% CONTENT_TYPE: TEXT}}"

    /// A compile error as "line L, column C: what" of the template as written.
    package static func describe(_ error: any Error) -> String {
        guard let error = error as? MustacheTemplate.ParserError else { return "\(error)" }
        let line = error.context.lineNumber
        let column = line == 1 ? error.context.columnNumber - pragma.count : error.context.columnNumber
        return "line \(line), column \(max(1, column)): \(error.error)"
    }
}
