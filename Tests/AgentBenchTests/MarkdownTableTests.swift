import AgentTestSupport
import Foundation
import Testing

@testable import agent_bench

/// `agent-bench --markdown`: one table of the current figures, each with the baselines of the
/// same run and its target, the commit and machine above it; and the same from a saved
/// `--json` report, without measuring again.
@Suite(.ownThreads) struct MarkdownTableTests {
    static func report() -> BenchReport {
        let machine = MachineInfo(date: "2026-11-26T06:00:00Z", commit: "7f7e05e", cores: 2, memory: "7.8 GiB RAM", kernel: "6.1.0",
                                  swift: "Swift 6.3", build: "release", load: MachineLoad(busyPercent: 3, strays: []))
        var routing = Section(number: 4, title: "Event routing", method: "…")
        routing.add(Figure("throughput 100 B, through the supervisor", .eventsPerSecond, median: 6_840_000, count: 5,
                           note: "100,000 events per run; target ≥ 200,000 at 100 B"))
        routing.add(Figure("  CPU per event: supervisor", .microseconds, median: 0.049, count: 5))
        routing.add(Figure("  the same, http on", .eventsPerSecond, median: 6_700_000, count: 5, note: "ratio 0.98; target: unchanged within noise"))
        routing.add(Figure("throughput 100 B, bare socketpair", .eventsPerSecond, median: 12_400_000, count: 5))
        routing.compare("throughput 100 B, through the supervisor", with: "throughput 100 B, bare socketpair", "no such figure")
        var http = Section(number: 9, title: "HTTP", method: "…")
        http.fail("supervisord: not installed")
        return BenchReport(machine: machine, quick: false, sections: [routing, http])
    }

    @Test func everyFigureHasItsRowWithTheBaselineOfTheSameRunAndItsTarget() {
        let lines = MarkdownRenderer.render(Self.report()).split(separator: "\n").map(String.init)
        #expect(lines[0].contains("commit `7f7e05e`") && lines[0].contains("2 cores") && lines[0].contains("release build"), "\(lines[0])")
        #expect(lines.contains("| 4. Event routing | throughput 100 B, through the supervisor | 6,840,000 ev/s | throughput 100 B, bare socketpair: 12,400,000 ev/s | ≥ 200,000 at 100 B |"),
                "\(lines)")
        // A figure under another with a target of its own has its row, named with the one above it.
        #expect(lines.contains("|  | throughput 100 B, through the supervisor › the same, http on | 6,700,000 ev/s |  | unchanged within noise |"), "\(lines)")
        // Neither a detail without a target nor the baseline has a row of its own.
        #expect(!lines.contains { $0.contains("CPU per event") || $0.hasPrefix("|  | throughput 100 B, bare socketpair") })
        #expect(lines.contains("| 9. HTTP | not measured | | | |"))
        #expect(lines.contains("- 9. supervisord: not installed"))
    }

    @Test func aSavedJSONReportMakesTheSameTable() throws {
        let report = Self.report()
        let path = NSTemporaryDirectory() + "agent-bench-report-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(report.json().utf8).write(to: URL(fileURLWithPath: path))
        #expect(MarkdownRenderer.render(try BenchReport.read(path)) == MarkdownRenderer.render(report))
    }

    @Test func aFileThatIsNotAReportIsRefusedWithWhatIsMissing() throws {
        let path = NSTemporaryDirectory() + "agent-bench-report-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"quick": false, "sections": []}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: BenchError.self) { try BenchReport.read(path) }
        do {
            _ = try BenchReport.read(path)
        } catch {
            #expect("\(error)".contains("expected a member /machine"), "\(error)")
        }
    }
}
