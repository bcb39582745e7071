import AgentTestSupport
import Foundation
import Testing

/// Every suite runs its tests on threads of their own (``OwnThreadsTrait``), never on the
/// cooperative pool: two bodies that block there (a `cc` build, a wait for a zombie) stopped
/// every task of the test process — an in-process supervisor's store reads among them — and a
/// test that only waited for a list saw 60 s go by (stop 94). A suite written without it fails
/// here, naming its file and line.
@Suite(.ownThreads) struct SuiteThreadsTests {
    @Test func everySuiteOfEveryTestTargetCarriesOwnThreads() throws {
        let root = TestPaths.repository + "/Tests"
        let files = try #require(FileManager.default.enumerator(atPath: root)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var suites = 0
        var missing: [String] = []
        for file in files where !file.hasPrefix("AgentTestSupport/") {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // A suite at the top of its file; one nested in it takes the trait from it (the
                // trait is recursive: given twice, each body would take two of the slots).
                if line.hasPrefix("@Suite") {
                    suites += 1
                    if !line.contains(".ownThreads") { missing.append("Tests/\(file):\(index + 1): \(line)") }
                } else if line.hasPrefix("@Test") {
                    missing.append("Tests/\(file):\(index + 1): a test outside a suite")
                }
            }
        }
        #expect(suites > 300, "the scan found only \(suites) suites under \(root)")
        #expect(missing.isEmpty, "add .ownThreads (`@Suite(.ownThreads)`):\n\(missing.joined(separator: "\n"))")
    }
}
