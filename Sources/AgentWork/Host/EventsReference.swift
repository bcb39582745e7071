import AgentBase

/// `docs/reference/events.md`: every event type of ``RuntimeEvent/all`` by source, and the
/// members of each payload.
public enum EventsReference {
    public static func markdown() -> String {
        var text = Markdown.header("Events reference", from: "the runtime's event declarations (RuntimeEvent+Catalog.swift)")
        text += """

        The event types the runtime emits itself. Each (but where it says otherwise) is routed like a module's event: to the processes that \
        subscribe to it, the store (`agent-control events`, GET /api/events), the outputs, tasks' `on_event` and \
        workflows' `wait_event`. Every event has a `type`, a `source` (below), a time and a JSON object payload \
        with the members listed. A module's events and a workflow's `publish` steps carry types of their own; so do events \
        published from outside (`agent-control publish`, POST /api/events: source `cli`, `api` or the `source` given), which \
        may not take a type listed here.

        """
        var sources: [String] = []
        for event in RuntimeEvent.all where !sources.contains(event.source) { sources.append(event.source) }
        for source in sources {
            let events = RuntimeEvent.all.filter { $0.source == source }
            text += "\n## Source `\(source)`\n\n"
            text += Markdown.table(["Type", "When", "Payload"], events.map {
                [Markdown.code($0.type), Markdown.cell($0.summary), "[\($0.payload.name)](#\(anchor($0.payload.name)))"]
            })
        }
        text += "\n## Payloads\n"
        var seen = Set<String>()
        for event in RuntimeEvent.all where seen.insert(event.payload.name).inserted {
            let types = RuntimeEvent.all.filter { $0.payload.name == event.payload.name }.map { Markdown.code($0.type) }
            text += "\n### \(event.payload.name)\n\nThe payload of " + types.joined(separator: ", ") + ".\n\n"
            text += Markdown.table(["Member", "Type", "Always", "Description"], event.payload.members.map {
                [Markdown.code($0.name), Markdown.cell($0.type), $0.always ? "yes" : "", Markdown.cell($0.description)]
            })
        }
        return text
    }

    /// The anchor a forge gives a heading: lower case, spaces as dashes.
    static func anchor(_ heading: String) -> String {
        heading.lowercased().map { $0 == " " ? "-" : String($0) }.joined()
    }
}
