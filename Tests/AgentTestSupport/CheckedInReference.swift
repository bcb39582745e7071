import Foundation
import Testing

/// The references of docs/reference are generated from the code; each has a test that
/// generates it again and compares it with the checked-in file.
package enum CheckedInReference {
    /// The command that writes them all (as `Markdown.regenerateCommand` says).
    package static let regenerate = "agent-control docs --write docs/reference"

    /// Expects `generated` to be the checked-in `docs/reference/NAME`; the failure names the
    /// first line that differs and the command to run.
    package static func expectCurrent(_ generated: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let path = TestPaths.repository + "/docs/reference/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            Issue.record("docs/reference/\(name) is missing: run `\(regenerate)` and commit it", sourceLocation: sourceLocation)
            return
        }
        let checkedIn = String(decoding: data, as: UTF8.self)
        guard checkedIn != generated else { return }
        let old = checkedIn.split(separator: "\n", omittingEmptySubsequences: false)
        let new = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let line = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
        let was = line < old.count ? String(old[line]) : "(end of file)"
        let now = line < new.count ? String(new[line]) : "(end of file)"
        Issue.record("""
            docs/reference/\(name) is stale: run `\(regenerate)` and commit the result. \
            First difference at line \(line + 1): the file has \(was.debugDescription), the code generates \(now.debugDescription)
            """, sourceLocation: sourceLocation)
    }
}
