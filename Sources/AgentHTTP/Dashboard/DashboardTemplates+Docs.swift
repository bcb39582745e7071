extension DashboardTemplates {
    /// `/docs`: the list of pages beside the page, whose HTML comes from ``MarkdownHTML``
    /// (escaped there: the one triple mustache of the dashboard's pages besides the layout's body).
    static let docs = """
    <div class="docs">
    <nav class="docs-pages" aria-label="Documents"><ul>
    {{#pages}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{title}}</a></li>{{/pages}}
    </ul></nav>
    <article class="markdown">
    {{{html}}}
    </article>
    </div>
    """
}
