import AgentTestSupport
import Foundation
import Testing

/// `/docs` on a real agent: the README and docs/ pages rendered by the agent from the Markdown
/// of its runtime home, links between pages on `/docs/…`, the API reference from the document
/// the agent serves, the read pages' roles — and the attacks: a page name that climbs out of
/// the folder (encoded, dot segments), script through Markdown, a page too large to render.
@Suite(.ownThreads) struct DashboardDocsTests {
    /// A runtime home: the repository's README and docs/, a hostile page and a huge one.
    static func home() throws -> String {
        let home = TestPaths.temporaryDirectory("docs-home")
        let manager = FileManager.default
        try manager.createDirectory(atPath: home, withIntermediateDirectories: true)
        try manager.copyItem(atPath: TestPaths.repository + "/README.md", toPath: home + "/README.md")
        try manager.copyItem(atPath: TestPaths.repository + "/docs", toPath: home + "/docs")
        try """
        # Evil page

        <script>alert(1)</script> [click](javascript:alert(1)) [up](../../../etc/passwd) [tasks](reference/cli.md)
        """.write(toFile: home + "/docs/evil.md", atomically: true, encoding: .utf8)
        try String(repeating: "*a ", count: 1_000_000).write(toFile: home + "/docs/huge.md", atomically: true, encoding: .utf8)
        return home
    }

    @Test func theDocsArePagesOfTheDashboardForEveryRoleAndOnlyTheirs() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), environment: ["AGENT_RUNTIME_HOME": try Self.home()])
        let read = APIAgent.bearer(APIAgent.adminToken)

        let index = try agent.request("GET", "/docs", headers: read)
        #expect(index.status == 200 && index.header("content-type")?.hasPrefix("text/html") == true, "\(index.description)")
        #expect(index.body.contains(#"<article class="markdown">"#) && index.body.contains("<h1 id="), "\(index.body.prefix(2000))")
        #expect(index.body.contains(#"href="/docs/reference/settings""#) && index.body.contains(#"href="/docs/api""#), "the list of pages")
        let settings = try agent.request("GET", "/docs/reference/settings", headers: read)
        #expect(settings.status == 200 && settings.body.contains("<table>"), "\(settings.description.prefix(2000))")

        // The API reference of the document this agent serves.
        let api = try agent.request("GET", "/docs/api", headers: read)
        #expect(api.status == 200 && api.body.contains("<code>GET /api/status</code>"), "\(api.body.prefix(3000))")

        // Script through Markdown is text; links out of the folder or to scripts are not links.
        let evil = try agent.request("GET", "/docs/evil", headers: read)
        #expect(evil.status == 200 && evil.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(evil.body)")
        #expect(!evil.body.contains("<script>alert") && !evil.body.contains("javascript:alert(1)\""), "\(evil.body)")
        #expect(!evil.body.contains("etc/passwd\"") && evil.body.contains(#"<a href="/docs/reference/cli">tasks</a>"#), "\(evil.body)")

        // A page over the limit is not rendered; the answer says where the file is.
        let huge = try agent.request("GET", "/docs/huge", headers: read)
        #expect(huge.status == 413 && huge.body.contains("huge.md is 3000000 bytes"), "\(huge.description.prefix(2000))")

        // Page names that climb out of the folder, however spelled, find nothing.
        for path in ["/docs/..%2F..%2F..%2Fetc%2Fpasswd", "/docs/%2e%2e", "/docs/reference/..%2f..%2fREADME", "/docs/../../../../etc/passwd",
                     "/docs/reference/%2E%2E%2F%2E%2E%2FPackage", "/docs/README.md", "/docs/reference/..", "/docs/.%2e/.%2e/etc/passwd", "/docs/EVIL"] {
            let answer = try agent.request("GET", path, headers: read, extra: ["--path-as-is"])
            #expect(answer.status == 404, "\(path): \(answer.description.prefix(500))")
            #expect(!answer.body.contains("root:x:0:0") && !answer.body.contains("swift-tools-version"), "\(path)")
        }

        // A browser without a session goes to the login page, as for the other read pages; a
        // read-only user's session sees the pages.
        let anonymous = try agent.request("GET", "/docs/tasks", headers: ["Accept": "text/html"])
        #expect(anonymous.status == 303 && anonymous.header("location")?.hasPrefix("/login") == true, "\(anonymous.description)")
        #expect(try agent.request("GET", "/docs").status == 401)
        let (cookie, _, _) = try HTTPSession.login(agent, user: "bob")
        let bob = try agent.request("GET", "/docs/evil", headers: ["Cookie": cookie])
        #expect(bob.status == 200 && bob.body.contains(#"aria-current="page">Docs</a>"#), "\(bob.description.prefix(2000))")
    }
}
