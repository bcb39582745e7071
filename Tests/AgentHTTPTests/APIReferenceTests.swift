@testable import AgentHTTP
import AgentTestSupport
import JSONSchema
import Testing

/// docs/reference/openapi.json and http-api.md are what the command registry and the routes'
/// descriptions generate: the document an agent serves at /api/openapi.json.
@Suite(.ownThreads) struct APIReferenceTests {
    @Test func theCheckedInOpenAPIDocumentIsWhatTheRegistryGenerates() {
        CheckedInReference.expectCurrent(APIReference.openAPIJSON(), "openapi.json")
    }

    @Test func theCheckedInHTTPAPIReferenceIsWhatTheRegistryGenerates() {
        CheckedInReference.expectCurrent(APIReference.markdown(), "http-api.md")
    }

    /// Every operation of the document has its section in the Markdown.
    @Test func theMarkdownHasASectionForEveryOperation() {
        let markdown = APIReference.markdown()
        var missing: [String] = []
        for (path, item) in APIReference.document["paths"]?.objectValue ?? [:] {
            for (method, _) in item.objectValue ?? [:] where !markdown.contains("### `\(method.uppercased()) \(path)`") {
                missing.append("\(method.uppercased()) \(path)")
            }
        }
        #expect(missing.isEmpty, "operations without a section: \(missing)")
    }
}
