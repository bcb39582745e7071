import Mustache

/// The dashboard's HTML, as Mustache templates compiled into the binary (the executable needs
/// no resource files). Each page renders into `layout`'s `body`.
enum DashboardTemplates {
    /// Every template, compiled once.
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in sources {
            // The templates are constants of this file: a syntax error is a programming error
            // caught by the first test that renders a page.
            try! library.register(text, named: name)
        }
        return library
    }()

    static let sources: [String: String] = [
        "layout": layout, "processes": processes, "process": process, "events": events,
        "modules": modules, "settings": settings, "chat": chat, "refused": refused, "login": login,
        "tasks": tasks, "run": run, "schedules": schedules, "memory": memory, "executors": executors, "fleet": fleet,
        "workflows": workflows, "workflowRun": workflowRun, "docs": docs, "chatPreferences": chatPreferences,
    ]

    static let layout = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{title}} · AgentRuntime</title>
    <link rel="stylesheet" href="/assets/dashboard.css">
    </head>
    <body data-page="{{page}}" data-role="{{role}}">
    <header>
    <a class="brand" href="/">AgentRuntime</a>
    <nav>
    {{#showNav}}{{#nav}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a>{{/nav}}{{/showNav}}
    </nav>
    {{#user}}<span class="user">{{name}} ({{role}})</span>{{#session}}<form method="post" action="/api/logout" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button class="quiet logout">Log out</button></form>{{/session}}{{/user}}
    </header>
    <main>
    {{#flash}}<p class="flash {{kind}}" role="status" id="flash">{{text}}</p>{{/flash}}
    {{{body}}}
    </main>
    <script src="/assets/dashboard.js"></script>
    </body>
    </html>

    """

    /// Shown to admins only: a read-only user's request would be refused (403) anyway.
    static let processForm = """
    {{#admin}}<form method="post" action="/processes/{{path}}" class="actions">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="back" value="{{back}}">
    <button name="action" value="start">Start</button><button name="action" value="stop">Stop</button><button name="action" value="restart">Restart</button>
    </form>{{/admin}}
    """

    static let processes = """
    <h1>Processes</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    {{#agent}}<p class="summary">Agent pid {{pid}} · up <span id="agent-uptime">{{uptime}}</span> · store {{store}}</p>{{/agent}}
    <div class="table-wrap">
    <table id="processes" class="cards">
    <thead><tr><th>Name</th><th>Type</th><th>State</th><th>PID</th><th>Uptime</th><th>Restarts</th><th>CPU</th><th>Memory</th><th title="Events the process emitted (a datasource's output, a monitor's alerts)">Emitted</th><th title="Events queued for delivery to the process (what it subscribes to)">Received</th><th title="Events for the process that were dropped (its full queue, a dead worker)">Dropped</th><th>Actions</th></tr></thead>
    <tbody>
    {{#processes}}
    <tr data-process="{{name}}">
    <td data-label="Name"><a href="/processes/{{path}}">{{name}}</a></td>
    <td data-label="Type">{{type}}</td>
    <td data-label="State"><span class="state state-{{state}}" data-field="state">{{state}}</span>{{#detail}} <small data-field="detail">{{detail}}</small>{{/detail}}</td>
    <td data-label="PID" data-field="pid">{{pid}}</td>
    <td data-label="Uptime" data-field="uptime">{{uptime}}</td>
    <td data-label="Restarts" data-field="restarts">{{restarts}}</td>
    <td data-label="CPU" data-field="cpu">{{cpu}}</td>
    <td data-label="Memory" data-field="memory">{{memory}}</td>
    <td data-label="Emitted" data-field="emitted">{{emitted}}</td>
    <td data-label="Received" data-field="received">{{received}}</td>
    <td data-label="Dropped" data-field="dropped">{{dropped}}</td>
    <td data-label="Actions">
    \(processForm)
    </td>
    </tr>
    {{/processes}}
    {{^processes}}<tr><td colspan="12">No processes.</td></tr>{{/processes}}
    </tbody>
    </table>
    </div>

    """

    static let process = """
    <h1>{{name}} <span class="state state-{{state}}" data-field="state">{{state}}</span></h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <section class="facts" data-process="{{name}}">
    <dl>
    {{#facts}}<div><dt>{{label}}</dt><dd{{#field}} data-field="{{field}}"{{/field}}>{{value}}</dd></div>{{/facts}}
    </dl>
    \(processForm)
    </section>
    <section>
    <h2>Log</h2>
    {{#logs}}
    <pre id="log" class="log" data-url="{{url}}" data-next="{{next}}">{{#lines}}<span class="log-{{stream}}">{{time}} {{text}}</span>
    {{/lines}}</pre>
    {{/logs}}
    {{#logsNote}}<p class="note">{{logsNote}}</p>{{/logsNote}}
    </section>
    <section>
    <h2>History</h2>
    <div class="table-wrap"><table class="cards">
    <thead><tr><th>Time</th><th>Event</th><th>Detail</th></tr></thead>
    <tbody>
    {{#history}}<tr><td data-label="Time">{{time}}</td><td data-label="Event">{{event}}</td><td data-label="Detail">{{detail}}</td></tr>{{/history}}
    {{^history}}<tr><td colspan="3">{{historyNote}}</td></tr>{{/history}}
    </tbody></table></div>
    </section>
    <section>
    <h2>Settings</h2>
    {{#settings}}<pre class="code">{{settings}}</pre>{{/settings}}
    {{#settingsNote}}<p class="note">{{settingsNote}}</p>{{/settingsNote}}
    <p><a href="/settings">Edit the settings</a></p>
    </section>

    """

    static let events = """
    <h1>Events</h1>
    <form method="get" action="/events" class="filters">
    <label>Type <input name="type" value="{{type}}" placeholder="any"></label>
    <label>Source <input name="source" value="{{source}}" placeholder="any"></label>
    <label>Run <input name="run" value="{{run}}" placeholder="any"></label>
    <button>Filter</button>
    </form>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <div class="table-wrap">
    <table id="events" class="cards" data-next="{{next}}" data-type="{{type}}" data-source="{{source}}" data-run="{{run}}">
    <thead><tr><th>Id</th><th>Time</th><th>Type</th><th>Source</th><th>Payload</th></tr></thead>
    <tbody>
    {{#events}}<tr><td data-label="Id">{{id}}</td><td data-label="Time">{{time}}</td><td data-label="Type">{{type}}</td><td data-label="Source">{{source}}</td><td data-label="Payload"><code>{{payload}}</code></td></tr>
    {{/events}}
    </tbody>
    </table>
    </div>
    {{^events}}<p class="note" id="no-events">No events{{#filtered}} match{{/filtered}} yet.</p>{{/events}}

    """

    static let modules = """
    <h1>Modules</h1>
    {{#error}}<p class="flash error">{{error}}</p>{{/error}}
    <div class="table-wrap"><table class="cards" id="modules">
    <thead><tr><th>Module</th><th>Version</th><th>Process types</th><th>State</th><th></th></tr></thead>
    <tbody>
    {{#modules}}<tr data-module="{{name}}">
    <td data-label="Module">{{name}}</td><td data-label="Version">{{version}}</td>
    <td data-label="Process types">{{#types}}<div><b>{{type}}</b> <small>{{kind}}</small> {{description}}</div>{{/types}}</td>
    <td data-label="State">{{state}}</td>
    <td data-label="">{{#admin}}{{#toggle}}<form method="post" action="/modules"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="name" value="{{name}}"><button name="action" value="{{action}}">{{label}}</button></form>{{/toggle}}{{/admin}}</td>
    </tr>{{/modules}}
    </tbody></table></div>
    {{#admin}}{{#canChange}}
    <form method="post" action="/modules" class="filters">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="enable_module">
    <label>Enable a module <input name="name" placeholder="module name" required></label><button>Enable</button>
    </form>
    {{/canChange}}{{/admin}}

    """

    static let settings = """
    <h1>Settings</h1>
    {{#error}}<p class="flash error" id="settings-error">{{error}}</p>{{/error}}
    {{#hasErrors}}
    <ol class="errors" id="settings-errors">
    {{#errors}}<li data-line="{{line}}" data-pointer="{{pointer}}"><a href="#line-{{line}}">line {{line}}</a> <code>{{pointerShown}}</code>: {{message}}</li>{{/errors}}
    </ol>
    {{/hasErrors}}
    {{#editable}}
    <form method="post" action="/settings" id="settings-form">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="hash" value="{{hash}}">
    <p class="note">{{path}}</p>
    <textarea name="text" id="settings-text" spellcheck="false" rows="{{rows}}">{{text}}</textarea>
    <p><button>Check, save and apply</button></p>
    </form>
    {{#hasErrors}}
    <h2>Where</h2>
    <pre class="code listing" id="settings-listing">{{#lines}}<span id="line-{{number}}" class="{{#error}}line-error{{/error}}"><span class="ln">{{number}}</span>{{text}}{{#messages}}<span class="field-error">{{.}}</span>{{/messages}}</span>
    {{/lines}}</pre>
    {{/hasErrors}}
    {{/editable}}

    """

    static let chat = """
    <h1>Chat</h1>
    {{#error}}<p class="flash error" id="chat-error">{{error}}</p>{{/error}}
    <p><a href="/chat/preferences" id="chat-preferences-link">Your preferences</a> (language, units, verbosity)</p>
    <ol class="chat" id="chat-history">
    {{#messages}}<li class="msg msg-{{role}}"><span class="who">{{who}}</span> <span class="text">{{text}}</span> <time>{{time}}</time></li>
    {{/messages}}
    {{^messages}}<li class="note">No messages in “{{conversation}}” yet.</li>{{/messages}}
    </ol>
    <form method="post" action="/chat" id="chat-form">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="conversation" value="{{conversation}}">
    <input name="text" id="chat-text" placeholder="Ask the chatbot…" autocomplete="off" required autofocus>
    <button>Send</button>
    </form>
    <form id="voice-form" data-conversation="{{conversation}}">
    <label>Voice message <input type="file" id="voice-file" accept="audio/wav,audio/x-wav,.wav"></label>
    <button type="button" id="voice-record" class="quiet" hidden>Record</button>
    <label><input type="checkbox" id="voice-speak"> speak the answer</label>
    <button id="voice-send">Send recording</button>
    <span class="note" id="voice-status"></span>
    </form>
    {{#admin}}
    <form method="post" action="/chat/clear" class="inline">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="conversation" value="{{conversation}}">
    <button class="quiet">Clear this conversation</button>
    </form>
    {{/admin}}

    """

    static let login = """
    <h1>Log in</h1>
    {{#error}}<p class="flash error" id="login-error">{{error}}</p>{{/error}}
    <form method="post" action="/api/login" id="login-form" class="login">
    <input type="hidden" name="next" value="{{next}}">
    <label>User <input name="user" id="login-user" autocomplete="username" required autofocus></label>
    <label>Password <input name="password" id="login-password" type="password" autocomplete="current-password" required></label>
    <button>Log in</button>
    </form>

    """

    static let refused = """
    <h1>Refused</h1>
    <p class="flash error" id="refused">{{reason}}</p>
    <p><a href="{{back}}" id="refused-back">Back</a> · <a href="/">the dashboard</a></p>

    """
}
