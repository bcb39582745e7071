extension DashboardTemplates {
    /// `/memory`: shared memory's keys and values, a form to write one (admins), delete buttons;
    /// a refused list (a workflow run that does not exist) shows only why.
    static let memory = """
    <h1>Memory</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <form method="get" action="/memory" class="filters">
    <label>Workflow run <input name="run" value="{{run}}" placeholder="(agent-wide)"></label>
    <label>Prefix <input name="prefix" value="{{prefix}}"></label>
    <button>Show</button>
    </form>
    {{^error}}<p>Keys of {{scope}}, in key order.</p>
    <div class="table-wrap">
    <table id="memory" class="cards">
    <thead><tr><th>Key</th><th>Version</th><th>Updated</th><th>Value</th><th></th></tr></thead>
    <tbody>
    {{#entries}}<tr data-key="{{key}}">
    <td data-label="Key"><code>{{key}}</code></td><td data-label="Version">{{version}}</td><td data-label="Updated">{{updated}}</td>
    <td data-label="Value"><pre class="code">{{value}}</pre></td>
    <td data-label="">{{#admin}}<form method="post" action="/memory" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="run" value="{{run}}">
    <input type="hidden" name="key" value="{{key}}"><input type="hidden" name="expected_version" value="{{version}}">
    <button name="action" value="delete">Delete</button>
    </form>{{/admin}}</td>
    </tr>{{/entries}}
    {{^entries}}<tr><td colspan="5">No keys{{#prefix}} starting with <code>{{prefix}}</code>{{/prefix}}.</td></tr>{{/entries}}
    </tbody></table></div>
    {{#next}}<p><a href="{{next}}">More keys…</a></p>{{/next}}
    {{#admin}}<h2>Write a key</h2>
    <form method="post" action="/memory" id="memory-set" class="filters">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="run" value="{{run}}">
    <label>Key <input name="key" required maxlength="256"></label>
    <label>Value (JSON) <textarea name="value" rows="4" required>{}</textarea></label>
    <label>Expected version <input name="expected_version" inputmode="numeric" placeholder="(any; 0: only a new key)"></label>
    <button name="action" value="set">Write</button>
    </form>{{/admin}}{{/error}}

    """
}
