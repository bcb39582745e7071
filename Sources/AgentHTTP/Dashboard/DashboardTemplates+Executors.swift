extension DashboardTemplates {
    /// `/executors`: the runs waiting for the logged-in person (complete / fail forms), the
    /// executors (drain / resume for admins), the strategies and the queue by priority.
    static let executors = """
    <h1>Executors</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <h2>Runs waiting for you</h2>
    <div class="table-wrap">
    <table id="my-runs" class="cards">
    <thead><tr><th>Run</th><th>Task</th><th>Priority</th><th>Input</th><th>Queued</th><th></th></tr></thead>
    <tbody>
    {{#mine}}<tr data-run="{{id}}">
    <td data-label="Run"><a href="/runs/{{path}}">{{id}}</a></td><td data-label="Task">{{task}}</td><td data-label="Priority">{{priority}}</td>
    <td data-label="Input"><code>{{input}}</code></td><td data-label="Queued">{{queued}}</td>
    <td data-label=""><form method="post" action="/executors/runs/{{path}}" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input name="output" placeholder="output (JSON, default {})" aria-label="Output of {{id}}" autocomplete="off">
    <button name="action" value="complete">Complete</button>
    <input name="error" placeholder="why it failed" aria-label="Why {{id}} failed" autocomplete="off">
    <button name="action" value="fail">Fail</button>
    </form></td>
    </tr>{{/mine}}
    {{^mine}}<tr><td colspan="6">Nothing waits for you.</td></tr>{{/mine}}
    </tbody></table></div>
    <h2>Executors</h2>
    <p class="note">Strategy: {{strategy}}{{#taskStrategies}} · {{task}}: {{strategy}}{{/taskStrategies}} · queued: {{queued}}</p>
    <div class="table-wrap">
    <table id="executors" class="cards">
    <thead><tr><th>Executor</th><th>State</th><th>Running</th><th>Tasks</th><th>Labels</th><th>Person</th><th>Assigned</th><th></th></tr></thead>
    <tbody>
    {{#executors}}<tr data-executor="{{name}}">
    <td data-label="Executor">{{name}}</td><td data-label="State"><span class="state state-{{state}}">{{state}}</span></td>
    <td data-label="Running">{{running}}/{{max}}</td><td data-label="Tasks">{{tasks}}</td><td data-label="Labels">{{labels}}</td>
    <td data-label="Person">{{user}}</td><td data-label="Assigned">{{assigned}}</td>
    <td data-label="">{{#admin}}<form method="post" action="/executors/{{path}}" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    {{#draining}}<button name="action" value="resume">Resume</button>{{/draining}}{{^draining}}<button name="action" value="drain">Drain</button>{{/draining}}
    </form>{{/admin}}</td>
    </tr>{{/executors}}
    {{^executors}}<tr><td colspan="8">No executors in the settings (processes of <code>"type": "executor"</code>): each task runs on its own worker.</td></tr>{{/executors}}
    </tbody></table></div>

    """
}
