import AgentTestSupport
import Foundation
import Testing

/// The documents hold together: the README stays a short front page, and every relative link of
/// the README and of the guides in docs/ leads to a file that exists and, with an anchor, to a
/// heading of it (as a forge names headings).
@Suite(.ownThreads) struct DocumentationLinkTests {
    /// The README and the guides in docs/ (not the generated reference, which links nowhere).
    static var documents: [String] {
        let guides = (try? FileManager.default.contentsOfDirectory(atPath: TestPaths.repository + "/docs")) ?? []
        return ["README.md"] + guides.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func theReadmeIsAtMostThreeHundredLines() throws {
        let readme = try String(contentsOfFile: TestPaths.repository + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - (readme.hasSuffix("\n") ? 1 : 0)
        #expect(lines <= 300, "README.md has \(lines) lines: move what goes beyond its front page into the docs/ page it belongs to")
    }

    @Test func everyRelativeLinkAndAnchorOfTheDocumentsResolves() throws {
        var failures: [String] = []
        var checked = 0
        for document in Self.documents {
            let text = try String(contentsOfFile: TestPaths.repository + "/" + document, encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            for link in MarkdownLinks.links(in: text) where !MarkdownLinks.isExternal(link.target) {
                checked += 1
                if let failure = Self.check(link, from: document, folder: folder) { failures.append(failure) }
            }
        }
        #expect(checked > 50, "found \(checked) relative links")
        #expect(failures.isEmpty, "\(failures.count) links do not resolve:\n\(failures.joined(separator: "\n"))")
    }

    @Test func anchorsAndLinksAreReadAsAForgeReadsThem() {
        let text = """
            # A fleet (several agents on PostgreSQL)
            ## `agent-control`
            ## Tasks
            ## Tasks
            See [the store](concepts.md#the-store) and [a
            page](other.md), not `[code](x.md)`.
            ```sh
            # not a heading [nor a link](y.md)
            ```
            """
        #expect(MarkdownLinks.anchors(in: text) == ["a-fleet-several-agents-on-postgresql", "agent-control", "tasks", "tasks-1"])
        #expect(MarkdownLinks.links(in: text) == [MarkdownLink(text: "the store", target: "concepts.md#the-store", line: 5),
                                                  MarkdownLink(text: "a\npage", target: "other.md", line: 5)])
        #expect(MarkdownLinks.isExternal("https://example.com/a.md") && !MarkdownLinks.isExternal("docs/a.md"))
    }

    /// Why `link` of `document` does not resolve, if it does not.
    static func check(_ link: MarkdownLink, from document: String, folder: String) -> String? {
        let parts = link.target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let path = parts[0].removingPercentEncoding ?? parts[0]
        let file = path.isEmpty ? document : ((folder as NSString).appendingPathComponent(path) as NSString).standardizingPath
        let place = "\(document):\(link.line): [\(link.text)](\(link.target))"
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: TestPaths.repository + "/" + file, isDirectory: &isFolder) else {
            return "\(place): no file \(file)"
        }
        guard parts.count == 2, file.hasSuffix(".md") else { return nil }
        guard let text = try? String(contentsOfFile: TestPaths.repository + "/" + file, encoding: .utf8) else {
            return "\(place): \(file) is not readable text"
        }
        let anchors = MarkdownLinks.anchors(in: text)
        return anchors.contains(parts[1]) ? nil : "\(place): \(file) has no heading #\(parts[1]) (its headings: \(anchors.sorted().prefix(40).joined(separator: " ")))"
    }
}
