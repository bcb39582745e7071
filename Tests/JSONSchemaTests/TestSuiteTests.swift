import AgentTestSupport
import Testing
@testable import JSONSchema

/// The official JSON-Schema-Test-Suite for draft 2020-12, one test per file.
@Suite("JSON-Schema-Test-Suite draft 2020-12", .ownThreads, .enabled(if: TestSuite.shouldRun, TestSuite.skipReason))
struct TestSuiteTests {
    /// Optional files that must pass too; `optional/format/*` run with format assertion on.
    static let requiredOptionalFiles = ["optional/bignum.json"] + [
        "date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uuid", "regex",
    ].map { "optional/format/\($0).json" }

    @Test func suiteIsPresent() {
        #expect(TestSuite.files(in: "").count >= 40, "test suite not found at \(TestSuite.root.path)")
        #expect(TestSuite.remotes.count >= 20)
    }

    @Test("required", arguments: TestSuite.files(in: ""))
    func required(file: String) throws {
        let outcome = try TestSuite.run(file, formatAssertion: false)
        for failure in outcome.failures { Issue.record(Comment(rawValue: failure.description)) }
        #expect(outcome.passed > 0)
    }

    @Test("optional (must pass)", arguments: requiredOptionalFiles)
    func requiredOptional(file: String) throws {
        let outcome = try TestSuite.run(file, formatAssertion: file.hasPrefix("optional/format/"))
        for failure in outcome.failures { Issue.record(Comment(rawValue: failure.description)) }
        #expect(outcome.passed > 0)
    }

    /// The remaining optional files; they all pass today, so they are held to that too.
    static let otherOptionalFiles = (TestSuite.files(in: "optional") + TestSuite.files(in: "optional/format"))
        .filter { !requiredOptionalFiles.contains($0) }

    @Test("optional (other)", arguments: otherOptionalFiles)
    func otherOptional(file: String) throws {
        let outcome = try TestSuite.run(file, formatAssertion: file.hasPrefix("optional/format/"))
        for failure in outcome.failures { Issue.record(Comment(rawValue: failure.description)) }
        #expect(outcome.passed > 0)
    }
}
