@testable import AgentHTTP
import AgentTestSupport
import Testing

/// The dashboard's Markdown renderer: what the docs use becomes HTML, and nothing a page holds
/// becomes markup of its own — raw HTML, script links, attributes broken out of — whatever it is.
@Suite(.ownThreads) struct MarkdownHTMLTests {
    static func html(_ markdown: String, page: String = "docs/tasks.md") -> String {
        var renderer = MarkdownHTML { DocsLibrary.href($0, from: page) }
        return renderer.render(markdown)
    }

    @Test func whatTheDocsUseBecomesHTML() {
        let text = Self.html("""
        # Tasks and *runs*

        A paragraph with `code <b>`, **strong**, _emphasis_, a snake_case_name and a [link](https://example.org/a?b=1&c=2).

        - one
        - two with `x`
          - nested

        1. first
        2. second

        ```json
        {"a": "<tag>"}
        ```

        | Key | Meaning |
        | --- | --- |
        | `a\\|b` | one |

        > quoted

        ---
        """)
        #expect(text.contains(#"<h1 id="tasks-and-runs">Tasks and <em>runs</em></h1>"#), "\(text)")
        #expect(text.contains("<code>code &lt;b&gt;</code>") && text.contains("<strong>strong</strong>") && text.contains("<em>emphasis</em>"), "\(text)")
        #expect(text.contains("snake_case_name"), "an underscore inside a word is text")
        #expect(text.contains(#"<a href="https://example.org/a?b=1&amp;c=2">link</a>"#), "\(text)")
        #expect(text.contains("<ul>\n<li>one\n</li>\n<li>two with <code>x</code>\n<ul>\n<li>nested\n</li>\n</ul>\n</li>\n</ul>"), "\(text)")
        #expect(text.contains("<ol>\n<li>first\n</li>\n<li>second\n</li>\n</ol>"), "\(text)")
        #expect(text.contains(#"<pre><code class="language-json">{&quot;a&quot;: &quot;&lt;tag&gt;&quot;}"#), "\(text)")
        #expect(text.contains("<tr><td><code>a|b</code></td><td>one</td></tr>"), "\(text)")
        #expect(text.contains("<blockquote>\n<p>quoted</p>\n</blockquote>") && text.contains("<hr>"), "\(text)")
    }

    @Test func linksBetweenPagesGoToDocsAndOthersAreText() {
        #expect(DocsLibrary.href("settings.md#http", from: "docs/tasks.md") == "/docs/settings#http")
        #expect(DocsLibrary.href("reference/cli.md", from: "docs/tasks.md") == "/docs/reference/cli")
        #expect(DocsLibrary.href("../tasks.md", from: "docs/reference/cli.md") == "/docs/tasks")
        #expect(DocsLibrary.href("docs/tasks.md", from: "README.md") == "/docs/tasks")
        #expect(DocsLibrary.href("../README.md", from: "docs/tasks.md") == "/docs")
        #expect(DocsLibrary.href("benchmarks/README.md", from: "README.md") == "/docs/benchmarks")
        #expect(DocsLibrary.href("reference/openapi.json", from: "docs/http-api.md") == "/api/openapi.json")
        for refused in ["../../etc/passwd", "../Sources/AgentHTTP/HTTPFront.swift", "/etc/passwd", "javascript:alert(1)", "JavaScript:alert(1)",
                        "data:text/html,<script>", "//evil.example/x", "docs/../../x.md", "vbscript:x", "%2e%2e/%2e%2e/etc/passwd"] {
            #expect(DocsLibrary.href(refused, from: "docs/tasks.md") == nil, "\(refused)")
        }
    }

    /// Script injection through Markdown: every way to get markup in comes out as text.
    @Test func rawHTMLAndScriptLinksComeOutAsText() {
        let text = Self.html("""
        <script>alert(1)</script>
        <img src=x onerror=alert(1)>
        [click](javascript:alert(1)) [x](JAVASCRIPT:alert(1)) ![img](javascript:alert(1))
        [q](https://a.example/"onmouseover="alert(1)) <javascript:alert(1)> <https://ok.example/">
        `</code><script>` **<b>bold</b>** *<i>x</i>*
        <!-- a marker, dropped -->
        ```html"><script>
        </code></pre><script>alert(1)</script>
        ```
        | <th onclick=x> | b |
        | --- | --- |
        | <script> | [y](data:text/html,x) |
        # <script>h</script>
        """)
        #expect(!text.contains("<script") && !text.contains("<img") && !text.contains("<b>") && !text.contains("<i>") && !text.contains("<th onclick"), "\(text)")
        #expect(!text.lowercased().contains("href=\"javascript") && !text.contains("href=\"data:"), "\(text)")
        #expect(!text.contains("\"onmouseover=\"") && text.contains("&quot;onmouseover=&quot;"), "an attribute is not broken out of: \(text)")
        #expect(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && text.contains("click"), "\(text)")
        #expect(!text.contains("a marker"), "HTML comments (the documents' markers) are dropped")
        #expect(text.contains(#"<code class="language-htmlscript">"#), "\(text)")
    }

    /// A hostile page of a quarter megabyte renders, escaped, without a quadratic scan (each opener
    /// alone on a long line; a closer searched for and not found is not searched again).
    @Test func aQuarterMegabyteOfOpenersRendersEscaped() {
        for unit in ["[", "*", "_ ", "`", "<", "[a](", "**a", "> ", "- ", "1. ", "| ", "\\"] {
            let line = String(repeating: unit, count: (1 << 18) / unit.utf8.count)
            let text = Self.html(line)
            #expect(!text.isEmpty && !text.contains("<script"), "\(unit)")
        }
        let nested = Self.html(String(repeating: "> ", count: 50_000) + "deep\n" + String(repeating: "  - ", count: 10_000) + "x")
        #expect(nested.contains("deep"))
    }
}
