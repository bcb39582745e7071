import AgentTestSupport
import Foundation
import Testing

/// The documents' shell blocks marked `<!-- example: run -->` run whole against a live agent
/// in its folder (``DocumentedExampleTests/startAgent()``), and what the documents say they
/// print is what they print, compared loosely (``MarkdownExamples/looselyMatches(_:expected:)``):
/// in a block with `$ ` prompts, each command's output is the lines after it; otherwise a block
/// marked `<!-- example: prints -->` right after the runnable one. A failure names the file and
/// the line of the block.
@Suite(.ownThreads, .serialized) struct DocumentedRunnableBlockTests {
    /// The test's own page: one example of each marker, so the machinery is checked whatever
    /// the documents hold.
    static let fixture = TestPaths.repository + "/Tests/Fixtures/documented-examples.md"

    /// One thing to run: a script, the output it should have, and where it is written.
    struct Run {
        var file: String
        var line: Int
        var script: String
        var expected: String?
    }

    static func runs(in document: String) throws -> (runs: [Run], problems: [String]) {
        let blocks = try MarkdownExamples.fencedBlocks(inFile: document)
        var runs: [Run] = []
        var problems: [String] = []
        for (index, block) in blocks.enumerated() {
            if block.marked("prints"), index == 0 || !blocks[index - 1].marked("run") {
                problems.append("\(block): marked prints, but the block above it is not marked run")
            }
            guard block.marked("run") else { continue }
            guard ["sh", "bash", "shell", "console"].contains(block.language) else {
                problems.append("\(block): marked run, but it is a ```\(block.language) block, not a shell one")
                continue
            }
            if block.lines.contains(where: { $0.hasPrefix("$ ") }) {
                var current: Run?
                var offset = 0
                while offset < block.lines.count {
                    let line = block.lines[offset]
                    offset += 1
                    guard line.hasPrefix("$ ") else {
                        if let run = current { current?.expected = (run.expected ?? "") + line + "\n" }
                        continue
                    }
                    if let run = current { runs.append(run) }
                    let start = block.line + offset
                    var command = String(line.dropFirst(2))
                    // A trailing backslash continues the command on the next line.
                    while command.hasSuffix("\\"), offset < block.lines.count {
                        command = String(command.dropLast()) + " " + block.lines[offset].trimmingCharacters(in: .whitespaces)
                        offset += 1
                    }
                    current = Run(file: document, line: start, script: command, expected: "")
                }
                if let run = current { runs.append(run) }
            } else {
                let prints = index + 1 < blocks.count && blocks[index + 1].marked("prints") ? blocks[index + 1].text : nil
                runs.append(Run(file: document, line: block.line, script: block.text, expected: prints))
            }
        }
        return (runs, problems)
    }

    /// Runs `run` (bash -e, the agent's address for the documents' 127.0.0.1:8080) and says how
    /// it failed, if it did.
    static func check(_ run: Run, port: Int, in directory: String, environment: [String: String]) throws -> String? {
        let script = "set -e\n" + run.script.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
        let result = try runProgram("/bin/bash", ["-c", script], in: directory, environment: environment, timeout: 180)
        let place = "\((run.file as NSString).lastPathComponent):\(run.line)"
        let output = "stdout: \(result.stdout.suffix(1500))\nstderr: \(result.stderr.suffix(1500))"
        guard result.status == 0 else { return "\(place): exit \(result.status)\n\(output)" }
        if let expected = run.expected {
            let comparison = MarkdownExamples.looselyMatches(result.stdout.replacingOccurrences(of: "\n@@status ", with: "\n"), expected: expected)
            if !comparison.matches {
                return "\(place): the output has no line like \"\(comparison.missing ?? "")\" (after the lines matched before it)\n\(output)"
            }
        }
        return nil
    }

    @Test func theBlocksMarkedRunRunAndPrintWhatTheDocumentsSay() throws {
        var runs: [Run] = []
        var failures: [String] = []
        for document in DocumentedExampleTests.documents + [Self.fixture] {
            let found = try Self.runs(in: document)
            runs += found.runs
            failures += found.problems
        }
        #expect(runs.contains { $0.file == Self.fixture && $0.expected?.isEmpty == false }, "the fixture's runnable blocks were found")
        let (agent, port, environment) = try DocumentedExampleTests.startAgent()
        defer { _ = agent.stop() }
        for run in runs {
            if let failure = try Self.check(run, port: port, in: agent.directory, environment: environment) { failures.append(failure) }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(runs.count) runnable examples failed:\n\(failures.joined(separator: "\n\n"))")
    }

    /// The loose comparison: shapes, not values.
    @Test func outputsAreComparedByShapeNotByTimesOrIDs() {
        let output = """
        NAME    STATE    PID    RESTARTS
        trades  running  4242   0
        run 6f1c2d3e-aaaa-4bbb-8ccc-1234567890ab started at 2026-11-26T12:00:03.25Z
        """
        #expect(MarkdownExamples.looselyMatches(output, expected: "NAME STATE PID RESTARTS\ntrades running 17 0\nrun UUID started at 2026-01-01T00:00:00Z").matches)
        #expect(MarkdownExamples.looselyMatches(output, expected: "trades running …\nrun … started at …").matches)
        #expect(!MarkdownExamples.looselyMatches(output, expected: "trades stopped 17 0").matches, "a word that differs is a different shape")
        #expect(!MarkdownExamples.looselyMatches(output, expected: "run … started at …\ntrades running …").matches, "out of order")
        #expect(MarkdownExamples.looselyMatches(output, expected: "trades stopped 17 0").missing == "trades stopped 17 0")
    }
}
