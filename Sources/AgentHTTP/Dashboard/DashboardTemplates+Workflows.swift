extension DashboardTemplates {
    /// `/workflows`: the workflows of the settings (a start form each, for admins) and the
    /// newest runs.
    static let workflows = """
    <h1>Workflows</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <div class="table-wrap">
    <table id="workflows" class="cards">
    <thead><tr><th>Workflow</th><th>Description</th><th>Steps</th><th>Trigger</th><th>Running</th><th>Waiting</th><th></th></tr></thead>
    <tbody>
    {{#workflows}}<tr data-workflow="{{name}}">
    <td data-label="Workflow"><a href="/workflows?workflow={{path}}">{{name}}</a></td><td data-label="Description">{{description}}</td>
    <td data-label="Steps">{{steps}}</td><td data-label="Trigger">{{trigger}}</td>
    <td data-label="Running">{{running}}</td><td data-label="Waiting">{{waiting}}</td>
    <td data-label="">{{#admin}}<form method="post" action="/workflows/{{path}}/run" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input name="input" placeholder="input (JSON, default {})" aria-label="Input of {{name}}" autocomplete="off">
    <button>Start</button>
    </form>{{/admin}}</td>
    </tr>{{/workflows}}
    {{^workflows}}<tr><td colspan="7">No workflows in the settings (<code>"workflows"</code>).</td></tr>{{/workflows}}
    </tbody></table></div>
    <h2>Runs{{#selected}} of {{selected}} <a class="quiet" href="/workflows">(all)</a>{{/selected}}</h2>
    <div class="table-wrap">
    <table id="workflow-runs" class="cards">
    <thead><tr><th>Run</th><th>Workflow</th><th>Status</th><th>Requested by</th><th>Started</th><th>Took</th><th>Error</th></tr></thead>
    <tbody>
    {{#runs}}<tr data-run="{{id}}">
    <td data-label="Run"><a href="/workflow-runs/{{path}}">{{id}}</a></td><td data-label="Workflow">{{workflow}}</td>
    <td data-label="Status"><span class="state state-{{status}}">{{status}}</span></td>
    <td data-label="Requested by">{{requestedBy}}</td><td data-label="Started">{{started}}</td><td data-label="Took">{{took}}</td>
    <td data-label="Error">{{error}}</td>
    </tr>{{/runs}}
    {{^runs}}<tr><td colspan="7">No runs yet.</td></tr>{{/runs}}
    </tbody></table></div>

    """

    /// `/workflow-runs/ID`: one run — its facts, its step log as a timeline (start from the
    /// run's start, duration, output or error), approve and reject on a waiting approval
    /// (anyone may send them: the step checks its approvers), cancel for admins.
    static let workflowRun = """
    <h1>Workflow run {{id}} <span class="state state-{{status}}" id="workflow-run-status" data-run="{{id}}" data-finished="{{finished}}" data-signature="{{signature}}">{{status}}</span></h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    {{#found}}
    <section class="facts">
    <dl>
    {{#facts}}<div><dt>{{label}}</dt><dd>{{value}}</dd></div>{{/facts}}
    </dl>
    {{#admin}}{{^finished}}<form method="post" action="/workflow-runs/{{path}}" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <button name="action" value="cancel">Cancel</button>
    </form>{{/finished}}{{/admin}}
    </section>
    {{#failure}}<section><h2>Error</h2><pre class="code" id="workflow-run-error">{{failure}}</pre></section>{{/failure}}
    <section><h2>Steps</h2>
    <div class="table-wrap">
    <table id="workflow-steps" class="cards">
    <thead><tr><th>Step</th><th>Kind</th><th>Status</th><th>Attempt</th><th>At</th><th>Took</th><th>Result</th></tr></thead>
    <tbody>
    {{#steps}}<tr data-step="{{step}}">
    <td data-label="Step">{{step}}</td><td data-label="Kind">{{kind}}</td>
    <td data-label="Status"><span class="state state-{{status}}">{{status}}</span></td>
    <td data-label="Attempt">{{attempt}}</td><td data-label="At">{{at}}</td><td data-label="Took">{{took}}</td>
    <td data-label="Result">{{#taskRun}}<a href="/runs/{{taskPath}}">task run {{taskRun}}</a> {{/taskRun}}{{#ranBy}}<small class="ran-by">{{ranBy}}</small> {{/ranBy}}{{#waitsFor}}waits for <code>{{waitsFor}}</code> {{/waitsFor}}{{#deadline}}until {{deadline}} {{/deadline}}
    {{#prompt}}<p class="prompt">{{prompt}} <span class="note">(approvers: {{approvers}})</span></p>{{/prompt}}
    {{#decision}}<p class="decision">{{decision}}</p>{{/decision}}
    {{#awaiting}}<form method="post" action="/workflow-runs/{{runPath}}/steps/{{stepPath}}" class="actions approval">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input name="comment" placeholder="comment" aria-label="Comment on {{step}}" autocomplete="off">
    <button name="action" value="approve">Approve</button><button name="action" value="reject">Reject</button>
    </form>{{/awaiting}}{{#waitingForOthers}}<p class="note">Waits for one of its approvers.</p>{{/waitingForOthers}}
    {{#output}}<code class="output">{{output}}</code>{{/output}}{{#failure}}<span class="error">{{failure}}</span>{{/failure}}</td>
    </tr>{{/steps}}
    {{^steps}}<tr><td colspan="7">No step has started yet.</td></tr>{{/steps}}
    </tbody></table></div></section>
    <section><h2>Input</h2><pre class="code" id="workflow-run-input">{{input}}</pre></section>
    {{#variables}}<section><h2>Variables</h2><pre class="code" id="workflow-run-variables">{{variables}}</pre></section>{{/variables}}
    {{#output}}<section><h2>Output</h2><pre class="code" id="workflow-run-output">{{output}}</pre></section>{{/output}}
    {{/found}}
    <p><a href="/workflows">All workflows and runs</a></p>

    """
}
