extension DashboardTemplates {
    /// `/tasks`: the tasks of the settings (a run form each, for admins) and the newest runs,
    /// whose status the script refreshes.
    static let tasks = """
    <h1>Tasks</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <div class="table-wrap">
    <table id="tasks" class="cards">
    <thead><tr><th>Task</th><th>Type</th><th>Description</th><th>Queued</th><th>Running</th><th></th></tr></thead>
    <tbody>
    {{#tasks}}<tr data-task="{{name}}">
    <td data-label="Task">{{name}}</td><td data-label="Type">{{type}}</td><td data-label="Description">{{description}}</td>
    <td data-label="Queued">{{queued}}</td><td data-label="Running">{{running}}</td>
    <td data-label="">{{#admin}}<form method="post" action="/tasks/{{path}}/run" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input name="input" placeholder="input (JSON, default {})" aria-label="Input of {{name}}" autocomplete="off">
    <select name="priority" aria-label="Priority"><option>normal</option><option>low</option><option>high</option><option>critical</option></select>
    <button>Run</button>
    </form>{{/admin}}</td>
    </tr>{{/tasks}}
    {{^tasks}}<tr><td colspan="6">No tasks in the settings (<code>"tasks"</code>).</td></tr>{{/tasks}}
    </tbody></table></div>
    <h2>Runs</h2>
    {{#note}}<p class="note">{{note}}</p>{{/note}}
    <div class="table-wrap">
    <table id="runs" class="cards">
    <thead><tr><th>Run</th><th>Task</th><th>Status</th><th>Attempt</th><th>Priority</th><th>Queued</th><th>Took</th><th>Error</th></tr></thead>
    <tbody>
    \(runRows)
    </tbody></table></div>

    """

    /// The rows of the runs table (also what the script's refresh replaces them with).
    static let runRows = """
    {{#runs}}<tr data-run="{{id}}">
    <td data-label="Run"><a href="/runs/{{path}}">{{id}}</a></td><td data-label="Task">{{task}}</td>
    <td data-label="Status"><span class="state state-{{status}}" data-field="status">{{status}}</span></td>
    <td data-label="Attempt">{{attempt}}</td><td data-label="Priority">{{priority}}</td>
    <td data-label="Queued">{{queued}}</td><td data-label="Took">{{took}}</td><td data-label="Error">{{error}}</td>
    </tr>{{/runs}}
    {{^runs}}<tr id="no-runs"><td colspan="8">No runs yet.</td></tr>{{/runs}}
    """

    /// The run page's attempts: one row each (times, status, exit, executor, agent, error), its
    /// stderr and stdout tails folded below it.
    static let attempts = """
    <section><h2>Attempts</h2>
    {{#attemptsNotKept}}<p class="note">{{attemptsNotKept}} more attempt(s) not kept (the first and the newest are).</p>{{/attemptsNotKept}}
    <div class="table-wrap">
    <table id="attempts" class="cards">
    <thead><tr><th>#</th><th>Status</th><th>Started</th><th>Ended</th><th>Took</th><th>Exit</th><th>Executor</th><th>Agent</th><th>Error</th></tr></thead>
    <tbody>
    {{#attempts}}<tr data-attempt="{{number}}">
    <td data-label="#">{{number}}{{#fromRun}} <small title="made from the run's record: the store has no record of this attempt">(run record)</small>{{/fromRun}}</td>
    <td data-label="Status"><span class="state state-{{status}}">{{status}}</span></td>
    <td data-label="Started">{{started}}</td><td data-label="Ended">{{ended}}</td><td data-label="Took">{{took}}</td>
    <td data-label="Exit">{{exit}}</td><td data-label="Executor">{{executor}}</td><td data-label="Agent">{{agent}}</td>
    <td data-label="Error">{{error}}{{#stderr}}<details><summary>stderr</summary><pre class="log">{{stderr}}</pre></details>{{/stderr}}{{#stdout}}<details><summary>stdout</summary><pre class="log">{{stdout}}</pre></details>{{/stdout}}</td>
    </tr>{{/attempts}}
    {{^attempts}}<tr><td colspan="9">No attempt yet.</td></tr>{{/attempts}}
    </tbody></table></div></section>
    """

    /// `/runs/ID`: one run, its output and the tail of its stderr; rerun and cancel.
    static let run = """
    <h1>Run {{id}} <span class="state state-{{status}}" id="run-status" data-run="{{id}}" data-finished="{{finished}}">{{status}}</span></h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    {{#found}}
    <section class="facts">
    <dl>
    {{#facts}}<div><dt>{{label}}</dt><dd>{{value}}</dd></div>{{/facts}}
    </dl>
    {{#admin}}<form method="post" action="/runs/{{path}}" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <button name="action" value="rerun">Run again</button>{{^finished}}<button name="action" value="cancel">Cancel</button>{{/finished}}
    </form>{{/admin}}
    </section>
    {{#failure}}<section><h2>Error</h2><pre class="code" id="run-error">{{failure}}</pre></section>{{/failure}}
    <section><h2>Input</h2><pre class="code" id="run-input">{{input}}</pre></section>
    {{#output}}<section><h2>Output</h2><pre class="code" id="run-output">{{output}}</pre></section>{{/output}}
    {{#stderr}}<section><h2>Stderr (tail)</h2><pre class="log" id="run-stderr">{{stderr}}</pre></section>{{/stderr}}
    \(attempts)
    <p><a href="/events?run={{path}}">This run's events</a></p>
    {{/found}}
    <p><a href="/tasks">All tasks and runs</a></p>

    """
}
