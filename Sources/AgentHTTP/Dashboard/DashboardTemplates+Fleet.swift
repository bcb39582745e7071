extension DashboardTemplates {
    /// `/fleet`: the agents of the fleet as their heartbeats tell of them, the database's
    /// condition, and this agent's published and received events.
    static let fleet = """
    <h1>Fleet</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    {{^error}}
    <p class="note" id="fleet-database">This agent: <strong>{{self}}</strong> · database {{database}} · <span data-field="condition">{{#degraded}}degraded: {{degraded}}{{/degraded}}{{^degraded}}reachable{{/degraded}}</span> · changes waiting: <span data-field="backlog">{{backlog}}</span></p>
    <div class="table-wrap">
    <table id="fleet-agents" class="cards">
    <thead><tr><th>Agent</th><th>Host</th><th>Version</th><th>State</th><th>Processes</th><th>Executors</th><th>Runs</th><th>Load</th><th>Last heartbeat</th></tr></thead>
    <tbody>
    {{#agents}}<tr data-agent="{{id}}">
    <td data-label="Agent">{{id}}{{#this}} (this one){{/this}}</td><td data-label="Host" data-field="host">{{host}}</td>
    <td data-label="Version" data-field="version">{{version}}</td>
    <td data-label="State"><span data-field="state" class="state state-{{state}}">{{state}}</span></td>
    <td data-label="Processes" data-field="processes" title="{{processList}}">{{processes}}</td>
    <td data-label="Executors" data-field="executors">{{executors}}</td>
    <td data-label="Runs" data-field="runs">{{runs}}</td><td data-label="Load" data-field="load">{{load}}</td>
    <td data-label="Last heartbeat"><span data-field="heartbeat">{{heartbeat}}</span> (<span data-field="ago">{{ago}}</span>)</td>
    </tr>{{/agents}}
    {{^agents}}<tr><td colspan="9">No agent has reported yet.</td></tr>{{/agents}}
    </tbody></table></div>
    <h2>Events</h2>
    <p class="note" id="fleet-events">Publishes: <span data-field="publishes">{{publishes}}</span> · receives: <span data-field="receives">{{receives}}</span></p>
    {{/error}}

    """
}
