import Foundation
import Testing

/// Whether the speech packages the voice tests need are on this host. Tests skip without
/// them, saying so — except under CI=true, where `.ci/run` installs them and their absence fails.
package enum SpeechPackages {
    /// What is missing (nil: all there).
    package static let missing: String? = {
        let files = ["/usr/share/pocketsphinx/model/en-us/en-us.lm.bin", "/usr/bin/espeak-ng"]
        let libraries = ["libpocketsphinx.so.3", "libespeak-ng.so.1"]
        let absent = files.filter { !FileManager.default.fileExists(atPath: $0) } + libraries.filter { dlopen($0, RTLD_LAZY) == nil }
        return absent.isEmpty ? nil : absent.joined(separator: ", ")
    }()
    /// Whether the voice tests run here.
    package static let testable = missing == nil || ProcessInfo.processInfo.environment["CI"] == "true"
    package static let reason: Comment = "the speech packages are missing (apt-get install libpocketsphinx-dev pocketsphinx-en-us espeak-ng libespeak-ng-dev)"

    /// Checked first in each voice test: under CI a missing package fails here, naming it.
    package static func require() throws {
        try #require(missing == nil, "CI=true and \(missing ?? "") missing: .ci/run installs libpocketsphinx-dev pocketsphinx-en-us espeak-ng libespeak-ng-dev")
    }

    /// `text` spoken by the espeak-ng program into `path` (22,050 Hz mono 16-bit).
    package static func speak(_ text: String, into path: String) throws {
        let result = try runProgram("/usr/bin/espeak-ng", ["-w", path, text])
        try #require(result.status == 0, "espeak-ng: \(result.stderr)")
    }
}
