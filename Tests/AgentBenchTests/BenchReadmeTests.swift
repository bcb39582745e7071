import AgentTestSupport
import Foundation
import Testing

@testable import agent_bench

/// benchmarks/README.md is written by `agent-bench --markdown`: the method and one table of
/// every figure the bench has, so a figure added to the bench without a new table fails here.
@Suite(.ownThreads) struct BenchReadmeTests {
    static let readmePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("benchmarks/README.md").path

    /// The figure numbers of the table's first column (`| 4. Event routing | …`).
    static func figureNumbers(inTable text: String) -> [Int] {
        text.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("| ") else { return nil }
            let first = line.dropFirst(2).prefix { $0 != "|" }
            guard let dot = first.firstIndex(of: "."), first[dot...].hasPrefix(". ") else { return nil }
            return Int(first[..<dot])
        }
    }

    @Test func theCheckedInTableHasARowForEveryFigureOfTheBench() throws {
        let text = try String(contentsOfFile: Self.readmePath, encoding: .utf8)
        #expect(text.hasPrefix(BenchReadme.generatedNotice), "benchmarks/README.md is written by agent-bench --markdown")
        #expect(Self.figureNumbers(inTable: text) == AgentBench.figures,
                "benchmarks/README.md's table has figures \(Self.figureNumbers(inTable: text)), the bench \(AgentBench.figures): run agent-bench --markdown > benchmarks/README.md")
        for figure in AgentBench.figures {
            #expect(text.contains("\n### \(figure). "), "benchmarks/README.md has no method for figure \(figure)")
        }
    }

    @Test func theDocumentHasTheMethodOfEveryFigureTheTableAndTheMachine() {
        var report = MarkdownTableTests.report()
        report.machine.model = "Intel(R) Xeon(R) Platinum 8375C"
        let text = BenchReadme.render(report)
        #expect(text.contains("### 4. Event routing\n\n…"), "\(text)")
        #expect(text.contains("### 9. HTTP\n\n…"))
        #expect(text.contains("on 2 cores (Intel(R) Xeon(R) Platinum 8375C), 7.8 GiB RAM, Linux 6.1.0"), "\(text)")
        #expect(Self.figureNumbers(inTable: text) == [4, 9])
        #expect(text.contains("[HISTORY.md](HISTORY.md)"))
        #expect(BenchReadme.caveat(report) == nil, "a quiet release run needs no caveat")
    }

    @Test func aQuickRunOfADebugBuildOnABusyMachineSaysSoAboveItsTable() {
        var report = MarkdownTableTests.report()
        report.quick = true
        report.machine.build = "debug (figures are not meaningful)"
        report.machine.load = MachineLoad(busyPercent: 85, strays: [])
        let caveat = BenchReadme.caveat(report) ?? ""
        #expect(caveat.contains("`--quick` run") && caveat.contains("debug build") && caveat.contains("85 % busy"), "\(caveat)")
        #expect(BenchReadme.render(report).contains(caveat))
    }
}
