import Foundation
import Testing
@testable import JSONSchema

/// Locates and runs the official JSON-Schema-Test-Suite (json-schema-org/JSON-Schema-Test-Suite,
/// commit 44401e0c046704b476ec9d2e2fccdaee618f259d, its `tests/draft2020-12` and `remotes`).
///
/// Its folder is `$JSON_SCHEMA_TEST_SUITE` when that is set, else
/// `<repo root>/../shared/json-schema-test-suite` (the repo root being three levels above this
/// file). Where the variable is unset and the default folder is absent, the suite's tests are
/// skipped, saying so; where the variable is set (as `.ci/run` does), a missing suite fails.
enum TestSuite {
    /// The folder named by `JSON_SCHEMA_TEST_SUITE`, if that is set and not empty.
    static let configuredPath: String? = {
        guard let value = ProcessInfo.processInfo.environment["JSON_SCHEMA_TEST_SUITE"], !value.isEmpty else { return nil }
        return value
    }()

    static let root: URL = configuredPath.map { URL(fileURLWithPath: $0).standardizedFileURL }
        ?? URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("../shared/json-schema-test-suite")
        .standardizedFileURL

    /// Whether the suite's draft 2020-12 folder is there.
    static let isPresent: Bool = {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: draftDirectory.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }()

    /// Whether the suite's tests run: it is present, or it was asked for (and so must be).
    static let shouldRun = isPresent || configuredPath != nil

    /// Why the suite's tests were skipped, shown in the test output.
    static let skipReason = Comment(rawValue: """
        the JSON Schema test suite is not at \(root.path): set JSON_SCHEMA_TEST_SUITE to a checkout of \
        json-schema-org/JSON-Schema-Test-Suite (commit 44401e0c046704b476ec9d2e2fccdaee618f259d) to run it
        """)

    static let draftDirectory = root.appendingPathComponent("tests/draft2020-12")

    /// Every file under `remotes/`, keyed as the suite expects them to be served.
    static let remotes: [String: JSONValue] = {
        let base = root.appendingPathComponent("remotes")
        var result: [String: JSONValue] = [:]
        guard let enumerator = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return result }
        for case let url as URL in enumerator where url.pathExtension == "json" {
            let relative = String(url.standardizedFileURL.path.dropFirst(base.standardizedFileURL.path.count + 1))
            if let data = FileManager.default.contents(atPath: url.path), let value = try? JSONValue.parse(data) {
                result["http://localhost:1234/" + relative] = value
            }
        }
        return result
    }()

    /// JSON file names in a directory of the suite (relative to tests/draft2020-12), sorted.
    static func files(in subdirectory: String) -> [String] {
        let directory = subdirectory.isEmpty ? draftDirectory : draftDirectory.appendingPathComponent(subdirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let prefix = subdirectory.isEmpty ? "" : subdirectory + "/"
        return names.filter { $0.hasSuffix(".json") }.sorted().map { prefix + $0 }
    }

    /// One failed expectation of the suite.
    struct Failure: CustomStringConvertible {
        let file: String
        let group: String
        let test: String
        let detail: String

        var description: String { "\(file) | \(group) | \(test): \(detail)" }
    }

    /// Result of running one suite file.
    struct Outcome {
        var passed = 0
        var failures: [Failure] = []
    }

    /// Runs every case of a suite file; both `isValid` and `validate` must agree with the
    /// expected result.
    static func run(_ file: String, formatAssertion: Bool) throws -> Outcome {
        let url = draftDirectory.appendingPathComponent(file)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return Outcome(passed: 0, failures: [Failure(file: file, group: "-", test: "-", detail: "cannot read \(url.path)")])
        }
        let groups = try JSONValue.parse(data).arrayValue ?? []
        var outcome = Outcome()
        for group in groups {
            let description = group["description"]?.stringValue ?? "?"
            let tests = group["tests"]?.arrayValue ?? []
            let validator: JSONSchemaValidator
            do {
                validator = try JSONSchemaValidator(
                    schema: group["schema"] ?? .null, resources: remotes, options: .init(formatAssertion: formatAssertion))
            } catch {
                for test in tests {
                    outcome.failures.append(Failure(file: file, group: description, test: test["description"]?.stringValue ?? "?", detail: "schema did not compile: \(error)"))
                }
                continue
            }
            for test in tests {
                let name = test["description"]?.stringValue ?? "?"
                let instance = test["data"] ?? .null
                let expected = test["valid"]?.boolValue ?? false
                let fast = validator.isValid(instance)
                let errors = validator.validate(instance)
                if fast == expected && errors.isEmpty == expected {
                    outcome.passed += 1
                } else {
                    let shown = errors.prefix(5).map(\.description).joined(separator: "; ")
                    outcome.failures.append(Failure(
                        file: file, group: description, test: name,
                        detail: "expected \(expected ? "valid" : "invalid"), isValid=\(fast), validate found \(errors.count) error(s) [\(shown)] for \(instance.serialized())"))
                }
            }
        }
        return outcome
    }
}
