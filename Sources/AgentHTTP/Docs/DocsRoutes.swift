import AgentBase
import Foundation
import Hummingbird
import JSONSchema

/// `/docs` on the dashboard: the README and the docs/ pages rendered from their Markdown by the
/// agent itself (``MarkdownHTML``: offline, nothing from elsewhere, everything escaped), links
/// between pages rewritten to `/docs/…`, and `/docs/api`, the HTTP API reference made from the
/// OpenAPI document this agent serves. The same roles as the dashboard's other read pages (a
/// session or token of any role; a browser without one goes to the login page).
struct DocsRoutes: Sendable {
    let library: DocsLibrary
    /// The OpenAPI document `/api/openapi.json` serves.
    let document: JSONValue

    /// Reading and rendering run here, off the HTTP front's one event loop thread.
    static let pool = BlockingPool(name: "agent-docs", width: 1)

    func register(on router: Router<AgentRequestContext>) {
        router.get("/docs") { request, context in await page("", request, context) }
        router.get("/docs/{name}") { request, context in await page(context.parameters.get("name") ?? "", request, context) }
        router.get("/docs/reference/{name}") { request, context in await page("reference/" + (context.parameters.get("name") ?? ""), request, context) }
    }

    /// What a page shows: its title, its HTML, or why there is none (and the status).
    struct Rendered: Sendable {
        var title: String
        var html: String
        var status: HTTPResponse.Status = .ok
    }

    func page(_ name: String, _ request: Request, _ context: AgentRequestContext) async -> Response {
        let library = library, document = document
        let (pages, rendered) = await Self.pool.run { () -> ([DocsLibrary.Page], Rendered) in
            let pages = library.pages()
            return (pages, name == "api" ? Self.api(document) : Self.render(name, library: library))
        }
        let index = pages.map { page -> [String: Any] in
            ["href": page.name.isEmpty ? "/docs" : "/docs/" + page.name, "title": page.name.isEmpty ? "README" : page.name, "current": page.name == name]
        } + [["href": "/docs/api", "title": "HTTP API (this agent)", "current": name == "api"]]
        return DashboardRoutes.page("docs", title: rendered.title, nav: "docs", data: ["pages": index, "html": rendered.html],
                                    request: request, identity: context.identity, status: rendered.status)
    }

    /// The page `name` read and rendered, or a page saying why not.
    static func render(_ name: String, library: DocsLibrary) -> Rendered {
        guard let root = library.root else {
            return Rendered(title: "Docs", html: "<h1>Docs</h1>\n<p>" + MarkdownHTML.escape("No documents found: looked for README.md and docs/ in "
                + library.searched.joined(separator: ", ") + ". Install them with scripts/install.sh or the Debian package, or set AGENT_RUNTIME_HOME to the AgentRuntime checkout.") + "</p>", status: .notFound)
        }
        guard let page = library.page(name) else {
            return Rendered(title: "Not found", html: "<h1>Not found</h1>\n<p>" + MarkdownHTML.escape("There is no page \"\(name)\": the pages are listed beside.") + "</p>", status: .notFound)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: page.path)[.size] as? Int) ?? 0
        guard size <= DocsLibrary.maximumBytes, let data = FileManager.default.contents(atPath: page.path), data.count <= DocsLibrary.maximumBytes else {
            return Rendered(title: name, html: "<h1>Too large</h1>\n<p>" + MarkdownHTML.escape("\(page.path) is \(size) bytes, more than the \(DocsLibrary.maximumBytes) the dashboard renders: read the file itself.") + "</p>", status: .contentTooLarge)
        }
        let file = String(page.path.dropFirst(root.count + 1))
        var renderer = MarkdownHTML { DocsLibrary.href($0, from: file) }
        let html = renderer.render(String(decoding: data, as: UTF8.self))
        return Rendered(title: renderer.headings.first?.text ?? (name.isEmpty ? "README" : name), html: html)
    }

    /// The API reference of the document this agent serves.
    static func api(_ document: JSONValue) -> Rendered {
        var renderer = MarkdownHTML { DocsLibrary.href($0, from: "docs/reference/http-api.md") }
        let html = renderer.render(APIReference.markdown(of: document))
        return Rendered(title: "HTTP API", html: html)
    }
}
