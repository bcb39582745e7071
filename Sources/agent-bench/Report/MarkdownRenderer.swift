import Foundation

/// The current figures as one Markdown table for benchmarks/README.md (`--markdown`): every
/// figure with this runtime's value, the baselines measured in the same run, its target, and
/// the commit and machine above it, so that the table is written by the bench, never by hand.
enum MarkdownRenderer {
    static func render(_ report: BenchReport) -> String {
        let m = report.machine
        var lines = [
            "Measured by `agent-bench\(report.quick ? " --quick" : "")` at commit `\(m.commit)`, \(m.date), on \(m.cores) cores"
                + (m.model.map { " (\(cell($0)))" } ?? "") + ", \(m.memory), Linux \(m.kernel)\(m.idle.map { " (\(cell($0)))" } ?? ""), \(m.swift), \(m.build) build"
                + (m.load.map { String(format: "; the machine was %.0f %% busy before the run", $0.busyPercent) } ?? "") + ".",
            "",
            "| # | Figure | AgentRuntime | Baseline, same run | Target |",
            "| --- | --- | --- | --- | --- |",
        ]
        for section in report.sections {
            let compared = Set(section.figures.flatMap { $0.baselines ?? [] })
            var first = true
            var parent = ""
            for figure in section.figures {
                if !figure.label.hasPrefix(" ") { parent = figure.label }
                guard shown(figure, compared: compared) else { continue }
                // A figure under another (indented in the table for people) is named with it.
                let name = figure.label.hasPrefix(" ") ? parent + " › " + figure.label.trimmingSpaces : figure.label
                let baselines = (figure.baselines ?? []).compactMap { label in
                    section.figures.first { $0.label == label }.map { cell(label.trimmingSpaces) + ": " + value($0) }
                }
                lines.append("| " + [first ? "\(section.number). \(cell(section.title))" : "", cell(name), value(figure),
                                     baselines.joined(separator: "; "), cell(target(of: figure) ?? "")].joined(separator: " | ") + " |")
                first = false
            }
            if first { lines.append("| \(section.number). \(cell(section.title)) | not measured | | | |") }
        }
        let failures = report.failures
        if !failures.isEmpty {
            lines += ["", "Failed in this run:", ""] + failures.map { "- " + cell($0) }
        }
        return lines.joined(separator: "\n")
    }

    /// A row of its own: a figure of the first rank, or one with a target; a baseline shows in
    /// the row of the figure it is compared with.
    static func shown(_ figure: Figure, compared: Set<String>) -> Bool {
        !compared.contains(figure.label) && (!figure.label.hasPrefix(" ") || target(of: figure) != nil)
    }

    /// The target the figure's note states: what follows "target" up to the next ";".
    static func target(of figure: Figure) -> String? {
        guard let note = figure.note, let range = note.range(of: "target") else { return nil }
        var text = note[range.upperBound...].prefix { $0 != ";" }
        while let first = text.first, first == ":" || first == " " { text = text.dropFirst() }
        return text.isEmpty ? nil : String(text).trimmingSpaces
    }

    /// The median with its unit; p99 too where there are enough samples for it.
    static func value(_ figure: Figure) -> String {
        var text = TableRenderer.format(figure.median, figure.unit)
        if let p99 = figure.p99 { text += " (p99 " + TableRenderer.format(p99, figure.unit) + ")" }
        return text
    }

    static func cell(_ text: String) -> String {
        text.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
