import AgentTestSupport
import Foundation
import Testing

/// The documents' ```json blocks that are settings — a whole file, members of one
/// (`"tasks": {…}` without braces), or one process's settings (`{"type": "chatbot", …}`) — are
/// settings `validate-settings` accepts: the real binary, on the fragment laid over the
/// resources the documents name (``DocumentedExampleTests/settings(hash:)``). A fragment that
/// is deliberately partial or invalid says so above it (`<!-- example: partial -->`,
/// `<!-- example: invalid -->`); a block of answers or payloads is not settings and is skipped.
@Suite(.ownThreads, .serialized) struct DocumentedSettingsTests {
    /// The top-level keys and the process types, read from the generated settings reference
    /// (docs/reference/settings.md, made from the host's and the modules' schemas and checked
    /// current by its own test): `## \`key\`` headings, the top level's rows, `### \`type\` (module \`m\``.
    static func reference() throws -> (keys: Set<String>, types: Set<String>, modules: Set<String>) {
        let text = try String(contentsOfFile: TestPaths.repository + "/docs/reference/settings.md", encoding: .utf8)
        var keys: Set<String> = [], types: Set<String> = [], modules: Set<String> = []
        var topLevel = false
        for line in text.split(separator: "\n") {
            let quoted = line.split(separator: "`", omittingEmptySubsequences: false).map(String.init)
            if line.hasPrefix("## ") { topLevel = line == "## Top level" }
            guard quoted.count >= 3 else { continue }
            if line.hasPrefix("## `") || (topLevel && line.hasPrefix("| `")) {
                keys.insert(quoted[1])
            } else if line.hasPrefix("### `"), quoted.count >= 5 {
                types.insert(quoted[1])
                modules.insert(quoted[3])
            }
        }
        return (keys, types, modules)
    }

    /// What a block is: settings (as a whole file's members), or nothing to check.
    static func settings(of block: MarkdownBlock, keys: Set<String>, types: Set<String>) -> [String: Any]? {
        let text = block.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let parsed = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) ?? (try? JSONSerialization.jsonObject(with: Data(("{" + text + "}").utf8)))
        guard let object = parsed as? [String: Any], !object.isEmpty else { return nil }
        if Set(object.keys).isSubset(of: keys) { return object }
        if let type = object["type"] as? String, types.contains(type) { return ["processes": ["example": object]] }
        return nil
    }

    /// `fragment` over `base`: a top-level object merged member by member, each member (a
    /// process, a task, `listen`) replaced whole.
    static func merged(_ base: [String: Any], _ fragment: [String: Any]) -> [String: Any] {
        var result = base
        for (key, value) in fragment {
            if let inner = value as? [String: Any], let existing = base[key] as? [String: Any] {
                result[key] = existing.merging(inner) { $1 }
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// The `NAME`s of the `${env:NAME}` references in `text`.
    static func environmentNames(in text: String) -> [String] {
        text.components(separatedBy: "${env:").dropFirst().map { String($0.prefix { $0.isLetter || $0.isNumber || $0 == "_" }) }
    }

    @Test func theDocumentsSettingsFragmentsAreSettingsValidateSettingsAccepts() throws {
        let (keys, types, modules) = try Self.reference()
        #expect(keys.contains("processes") && keys.contains("enabled_modules") && types.contains("chatbot"), "\(keys) \(types)")
        let baseText = DocumentedExampleTests.settings(hash: "$2b$12$" + String(repeating: "a", count: 53))
        var base = try #require(JSONSerialization.jsonObject(with: Data(baseText.utf8)) as? [String: Any])
        // The shipped modules the process types come from (those built as libraries; the
        // chatbot is the runtime's own).
        base["enabled_modules"] = modules.sorted().filter { FileManager.default.fileExists(atPath: TestPaths.products + "/lib\($0).so") }
        let folder = TestPaths.temporaryDirectory("documented-settings")
        try FileManager.default.createDirectory(atPath: folder + "/jobs", withIntermediateDirectories: true)
        let environment = ["AGENT_API_TOKEN": DocumentedExampleTests.token, "TOKEN": DocumentedExampleTests.token]

        var checked = 0
        var failures: [String] = []
        for document in DocumentedExampleTests.documents + [DocumentedRunnableBlockTests.fixture] {
            for block in try MarkdownExamples.fencedBlocks(inFile: document) where ["json", "jsonc"].contains(block.language) {
                if block.marked("partial") || block.marked("not settings") { continue }
                guard let fragment = Self.settings(of: block, keys: keys, types: types) else {
                    if block.marked("invalid") { failures.append("\(block): marked invalid, but it is not settings") }
                    continue
                }
                checked += 1
                let settings = Self.merged(base, fragment)
                let data = try JSONSerialization.data(withJSONObject: settings, options: [.prettyPrinted, .sortedKeys])
                try data.write(to: URL(fileURLWithPath: folder + "/settings.json"))
                // The variables the fragment reads are the reader's to set.
                var given = environment
                for name in Self.environmentNames(in: String(decoding: data, as: UTF8.self)) where given[name] == nil { given[name] = "documented-example-value" }
                let result = try runProgram("validate-settings", ["--no-build", "-C", folder], in: folder, environment: given, timeout: 120)
                let said = (result.stdout + result.stderr).suffix(2000)
                if block.marked("invalid") {
                    if result.status == 0 { failures.append("\(block): marked invalid, but validate-settings accepts it") }
                } else if result.status != 0 {
                    failures.append("\(block): validate-settings refuses it (exit \(result.status)); fix it, or mark it <!-- example: partial --> if it is deliberately incomplete:\n\(said)")
                }
            }
        }
        #expect(checked > 5, "found \(checked) settings fragments")
        #expect(failures.isEmpty, "\(failures.count) of \(checked) settings fragments failed:\n\(failures.joined(separator: "\n\n"))")
    }
}
