import Foundation

/// Renders a report as a plain-text table for people.
enum TableRenderer {
    static func render(_ report: BenchReport) -> String {
        var lines: [String] = []
        let m = report.machine
        let build = m.build == "release" ? "" : " · \(m.build.uppercased())"
        lines.append("agent-bench\(report.quick ? " --quick" : "")\(build) · \(m.date) · commit \(m.commit) · \(m.cores) cores, \(m.memory) · Linux \(m.kernel)\(m.idle.map { " (\($0))" } ?? "") · \(m.swift)")
        if let load = m.load {
            lines.append(String(format: "machine busy before the run: %.0f %% of all cores", load.busyPercent)
                         + (load.strays.isEmpty ? "; no stray agent-control or agent-worker" : "; running, not started by the bench: " + load.strays.joined(separator: ", ")))
        }
        let labelWidth = max(44, report.sections.flatMap(\.figures).map { $0.label.count }.max() ?? 0)
        for section in report.sections {
            lines.append("")
            lines.append("\(section.number). \(section.title)")
            lines += wrap(section.method, indent: "   how: ", continuation: "        ", width: 100)
            if !section.figures.isEmpty {
                lines.append("   " + pad("", labelWidth) + leftPad("median", 13) + leftPad("p99", 13) + leftPad("max", 13) + leftPad("n", 7))
            }
            for figure in section.figures {
                var row = "   " + pad(figure.label, labelWidth)
                row += leftPad(format(figure.median, figure.unit), 13)
                row += leftPad(figure.p99.map { format($0, figure.unit) } ?? "—", 13)
                row += leftPad(figure.max.map { format($0, figure.unit) } ?? "—", 13)
                row += leftPad(String(figure.count), 7)
                if let note = figure.note { row += "   " + note }
                lines.append(row)
            }
            if let others = section.othersCPU {
                lines.append(String(format: "   meanwhile other processes used %.0f %% of a core", others)
                             + (section.stealCPU.map { String(format: " (of which %.0f %% stolen by the hypervisor)", $0) } ?? ""))
            }
            for note in section.notes { lines += wrap(note, indent: "   note: ", continuation: "         ", width: 100) }
            for failure in section.failures { lines += wrap(failure, indent: "   FAILED: ", continuation: "           ", width: 100) }
        }
        lines.append("")
        let failures = report.failures
        lines.append(failures.isEmpty ? "all runs completed; no event lost" : "\(failures.count) failure(s); exit status 1")
        return lines.joined(separator: "\n")
    }

    /// A value with its unit, to a sensible precision.
    static func format(_ value: Double, _ unit: Figure.Unit) -> String {
        guard value.isFinite else { return "—" }
        switch unit {
        case .milliseconds, .microseconds:
            let digits = abs(value) < 1 ? 3 : abs(value) < 10 ? 2 : abs(value) < 100 ? 1 : 0
            return String(format: "%.\(digits)f %@", value, unit.rawValue)
        case .eventsPerSecond, .perSecond:
            return grouped(Int(value.rounded())) + (unit == .perSecond ? " /s" : " ev/s")
        case .percentOfCore:
            return String(format: value < 0.1 ? "%.4f %%" : "%.2f %%", value)
        case .megabytes:
            return String(format: "%.1f MB", value)
        case .ratio:
            return String(format: "%.2f ×", value)
        case .count:
            return grouped(Int(value.rounded()))
        }
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (value < 0 ? "-" : "") + out
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }

    private static func wrap(_ text: String, indent: String, continuation: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = indent
        for word in text.split(separator: " ") {
            if current.count + word.count + 1 > width, current != indent, current != continuation {
                lines.append(current)
                current = continuation
            }
            current += (current == indent || current == continuation ? "" : " ") + word
        }
        lines.append(current)
        return lines
    }
}
