extension DashboardTemplates {
    /// `/schedules`: the schedules (pause, resume and run now for admins) and one's history.
    static let schedules = """
    <h1>Schedules</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    {{#fleetLeader}}<p id="schedule-leader">The fleet's schedules: {{fleetLeader}}</p>{{/fleetLeader}}
    <div class="table-wrap">
    <table id="schedules" class="cards">
    <thead><tr><th>Schedule</th><th>Task</th><th>When</th><th>State</th><th>Next</th><th>Last</th><th>Result</th><th>Missed</th><th>Skipped</th><th></th></tr></thead>
    <tbody>
    {{#schedules}}<tr data-schedule="{{name}}">
    <td data-label="Schedule"><a href="/schedules?name={{path}}">{{name}}</a></td><td data-label="Task">{{task}}</td>
    <td data-label="When">{{timing}}</td><td data-label="State"><span class="state state-{{state}}">{{state}}</span></td>
    <td data-label="Next">{{next}}</td><td data-label="Last">{{last}}</td>
    <td data-label="Result">{{#run}}<a href="{{runBase}}{{runPath}}">{{result}}</a>{{/run}}</td>
    <td data-label="Missed">{{missed}}</td><td data-label="Skipped">{{skipped}}</td>
    <td data-label="">{{#admin}}<form method="post" action="/schedules/{{path}}" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}">
    {{#paused}}<button name="action" value="resume">Resume</button>{{/paused}}{{^paused}}<button name="action" value="pause">Pause</button>{{/paused}}
    <button name="action" value="run">Run now</button>
    </form>{{/admin}}</td>
    </tr>{{/schedules}}
    {{^schedules}}<tr><td colspan="10">No schedules in the settings (<code>"schedules"</code>).</td></tr>{{/schedules}}
    </tbody></table></div>
    {{#selected}}<h2>History of {{selected}}</h2>
    <div class="table-wrap">
    <table id="schedule-history" class="cards">
    <thead><tr><th>Planned</th><th>Actual</th><th>Outcome</th><th>Run</th><th>Result</th><th>Times</th><th>Reason</th></tr></thead>
    <tbody>
    {{#history}}<tr>
    <td data-label="Planned">{{planned}}</td><td data-label="Actual">{{actual}}</td><td data-label="Outcome">{{outcome}}</td>
    <td data-label="Run">{{#run}}<a href="{{runBase}}{{runPath}}">{{run}}</a>{{/run}}</td><td data-label="Result">{{result}}</td>
    <td data-label="Times">{{count}}</td><td data-label="Reason">{{reason}}</td>
    </tr>{{/history}}
    {{^history}}<tr><td colspan="7">Nothing yet.</td></tr>{{/history}}
    </tbody></table></div>{{/selected}}

    """
}
