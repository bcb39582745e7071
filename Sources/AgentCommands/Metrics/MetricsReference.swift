import AgentBase

/// `docs/reference/metrics.md`: every metric family of ``MetricDeclaration/all`` with its
/// type, labels and help.
public enum MetricsReference {
    public static func markdown() -> String {
        var text = Markdown.header("Metrics reference", from: "the metric declarations (MetricDeclaration+Catalog.swift)")
        text += """

        The agent's figures as Prometheus metric families: `GET /metrics` in the Prometheus text format, \
        `GET /api/metrics` and `agent-control` over the control socket (the `metrics` command) as JSON. \
        Counters end in `_total` and count over the agent's life; labels take only bounded values \
        (names from the settings, states from a fixed list).

        """
        text += "\n" + Markdown.table(["Family", "Type", "Labels", "Help"], MetricDeclaration.all.map { family in
            [Markdown.code(family.name), family.kind.rawValue, family.labels.map { Markdown.code($0.name) }.joined(separator: ", "),
             Markdown.cell(family.help + (family.presence.map { " Present \($0)." } ?? ""))]
        })
        text += "\n## Labels\n\n"
        // One row for each label and meaning, with the families that carry it.
        var order: [String] = []
        var rows: [String: (label: MetricDeclaration.Label, families: [String])] = [:]
        for family in MetricDeclaration.all {
            for label in family.labels {
                let key = label.name + "\u{0}" + label.values
                if rows[key] == nil { order.append(key); rows[key] = (label, []) }
                rows[key]?.families.append(Markdown.code(family.name))
            }
        }
        let table = order.sorted().compactMap { rows[$0] }.map { row in
            [Markdown.code(row.label.name), Markdown.cell(row.label.values), row.families.joined(separator: ", ")]
        }
        text += Markdown.table(["Label", "Values", "On"], table)
        return text
    }
}
