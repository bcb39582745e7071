/// The dashboard's one style sheet and its little script, compiled into the binary. The script
/// only refreshes what the server already rendered (every page reads without it) by polling
/// the API: `/api/status`, `/api/events?after=`, a process's log.
enum DashboardAssets {
    static let css = """
    :root { --fg: #1d2329; --muted: #5f6b76; --line: #d9dee3; --bg: #f6f7f9; --card: #fff; --accent: #1f6feb;
            --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
    * { box-sizing: border-box; }
    body { margin: 0; color: var(--fg); background: var(--bg); font-size: 15px; line-height: 1.45; }
    header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; padding: .6rem 1rem; background: #24292f; color: #fff; }
    header a { color: #d0d7de; text-decoration: none; }
    header .brand { color: #fff; font-weight: 600; }
    header nav { display: flex; flex-wrap: wrap; gap: .25rem .9rem; flex: 1; }
    header nav a[aria-current] { color: #fff; border-bottom: 2px solid #fff; }
    header .user { color: #d0d7de; font-size: .9em; }
    header button.logout { color: #d0d7de; }
    form.login { display: flex; flex-direction: column; gap: .6rem; max-width: 20rem; }
    form.login label { display: flex; flex-direction: column; gap: .2rem; }
    main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
    h1 { font-size: 1.4rem; margin: .2rem 0 .8rem; }
    h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
    a { color: var(--accent); }
    .summary, .note { color: var(--muted); }
    .flash { padding: .5rem .75rem; border-radius: 6px; background: #ddf4ff; border: 1px solid #54aeff; white-space: pre-wrap; }
    .flash.error { background: #ffebe9; border-color: #ff8182; }
    .table-wrap { overflow-x: auto; }
    table { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
    th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
    th { font-size: .85em; color: var(--muted); font-weight: 600; background: #f0f2f4; }
    td code { font-size: .85em; word-break: break-all; }
    .state { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .85em; font-weight: 600; background: #eaeef2; }
    .state-running, .state-succeeded { background: #dafbe1; color: var(--ok); }
    .state-starting, .state-stopping, .state-backoff, .state-suspended, .state-queued, .state-retrying { background: #fff8c5; color: var(--warn); }
    .state-failed, .state-exited, .state-timed_out, .state-cancelled, .state-abandoned { background: #ffebe9; color: var(--bad); }
    form.actions { display: flex; gap: .3rem; flex-wrap: wrap; margin: 0; }
    button { font: inherit; font-size: .9em; padding: .25rem .7rem; border: 1px solid #afb8c1; border-radius: 6px; background: #f6f8fa; cursor: pointer; }
    button:hover { background: #eef1f4; }
    button.quiet { border-color: transparent; background: none; color: var(--muted); }
    input, textarea { font: inherit; padding: .3rem .5rem; border: 1px solid #afb8c1; border-radius: 6px; }
    form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0 0 .8rem; }
    form.inline { display: inline; }
    .facts dl { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .5rem; margin: 0 0 .8rem; }
    .facts dl div { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem; }
    .facts dt { font-size: .8em; color: var(--muted); }
    .facts dd { margin: 0; font-weight: 600; word-break: break-word; }
    pre.log, pre.code { background: #0d1117; color: #e6edf3; padding: .7rem; border-radius: 6px; overflow: auto; max-height: 24rem; font-size: .85em; }
    pre.log .log-stderr { color: #ffa198; }
    textarea#settings-text { width: 100%; font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .85em; }
    ol.errors { background: #ffebe9; border: 1px solid #ff8182; border-radius: 6px; padding: .5rem .5rem .5rem 2rem; }
    .listing .ln { display: inline-block; width: 3em; color: #7d8590; user-select: none; }
    .listing .line-error { background: #5a1e22; display: inline-block; width: 100%; }
    .field-error { display: block; color: #ffa198; padding-left: 3em; font-family: system-ui, sans-serif; }
    ol.chat { list-style: none; padding: 0; margin: 0 0 1rem; display: flex; flex-direction: column; gap: .4rem; }
    .msg { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .45rem .7rem; max-width: 48rem; }
    .msg-user { align-self: flex-end; background: #ddf4ff; }
    .msg-alert { background: #fff8c5; }
    .msg .who { font-weight: 600; }
    .msg time { display: block; font-size: .75em; color: var(--muted); }
    #chat-form { display: flex; gap: .5rem; }
    #chat-form input[name=text] { flex: 1; }
    @media (max-width: 720px) {
      table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
      table.cards thead { display: none; }
      table.cards tr { border-bottom: 1px solid var(--line); padding: .3rem 0; }
      table.cards td { border: 0; padding: .15rem .6rem; }
      table.cards td[data-label]::before { content: attr(data-label); display: inline-block; min-width: 6.5rem; color: var(--muted); font-size: .85em; }
    }
    .docs { display: flex; gap: 1.5rem; align-items: flex-start; }
    .docs-pages ul { list-style: none; margin: 0; padding: 0; min-width: 11rem; font-size: .9em; }
    .docs-pages a[aria-current] { font-weight: 600; }
    .markdown { min-width: 0; flex: 1; max-width: 60rem; background: var(--card); padding: .5rem 1.25rem; border: 1px solid var(--line); border-radius: 6px; }
    .markdown pre { background: #0d1117; color: #e6edf3; padding: .7rem; border-radius: 6px; overflow: auto; font-size: .85em; }
    .markdown code { font-size: .9em; }
    .markdown table { border-collapse: collapse; display: block; overflow: auto; }
    .markdown th, .markdown td { border: 1px solid var(--line); padding: .25rem .5rem; vertical-align: top; }
    .markdown blockquote { margin: 0; padding-left: 1rem; border-left: 3px solid var(--line); color: var(--muted); }
    @media (max-width: 720px) { .docs { display: block; } }

    """

    static let javascript = """
    "use strict";
    (function () {
      var page = document.body.getAttribute("data-page");
      function csrf() { var m = document.cookie.match(/(?:^|; )agent_csrf=([^;]+)/); return m ? m[1] : ""; }
      function get(url) {
        return fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.json() : null; }).catch(function () { return null; });
      }
      function duration(s) {
        if (s == null) return "";
        s = Math.floor(s);
        if (s < 60) return s + "s";
        if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
        if (s < 86400) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
        return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
      }
      function bytes(n) {
        if (n == null) return "";
        var units = ["B", "KiB", "MiB", "GiB"], i = 0;
        while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
        return (i ? n.toFixed(1) : n) + " " + units[i];
      }
      function set(row, field, text) {
        var cell = row.querySelector('[data-field="' + field + '"]');
        if (cell && cell.textContent !== text) cell.textContent = text;
      }
      function refreshProcesses() {
        get("/api/status").then(function (status) {
          if (!status || !status.processes) return;
          status.processes.forEach(function (p) {
            document.querySelectorAll('[data-process]').forEach(function (row) {
              if (row.getAttribute("data-process") !== p.name) return;
              var state = row.querySelector('[data-field="state"]');
              if (!state) state = document.querySelector('[data-field="state"]');
              if (state) { state.textContent = p.state; state.className = "state state-" + p.state; }
              set(row, "pid", p.pid ? String(p.pid) : "");
              set(row, "uptime", p.state === "running" ? duration(p.state_seconds) : "");
              set(row, "restarts", String(p.restarts || 0));
              set(row, "cpu", p.cpu_seconds != null ? p.cpu_seconds.toFixed(2) + " s" : "");
              set(row, "memory", bytes(p.rss_bytes));
              set(row, "emitted", String(p.events_emitted || 0));
              set(row, "received", String(p.events_delivered || 0));
              set(row, "dropped", String(p.events_dropped || 0));
            });
          });
          var up = document.getElementById("agent-uptime");
          if (up && status.uptime != null) up.textContent = duration(status.uptime);
        });
      }
      // A log line's controls written as \\u{...}, as the server writes them (a bidirectional
      // override showed the rest of a line reversed).
      function shown(text) {
        return String(text).replace(/[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/g, function (c) {
          return "\\\\u{" + c.charCodeAt(0).toString(16).toUpperCase() + "}";
        });
      }
      function followLog() {
        var log = document.getElementById("log");
        if (!log) return;
        var url = log.getAttribute("data-url");
        setInterval(function () {
          var next = log.getAttribute("data-next") || "0";
          get(url + (url.indexOf("?") < 0 ? "?" : "&") + "after=" + encodeURIComponent(next)).then(function (answer) {
            if (!answer || !answer.lines || !answer.lines.length) return;
            var atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
            answer.lines.forEach(function (line) {
              var span = document.createElement("span");
              span.className = "log-" + line.stream;
              span.textContent = line.time + " " + shown(line.text);
              log.appendChild(span); log.appendChild(document.createTextNode("\\n"));
            });
            log.setAttribute("data-next", String(answer.next));
            if (atEnd) log.scrollTop = log.scrollHeight;
          });
        }, 2000);
      }
      function followEvents() {
        var table = document.getElementById("events");
        if (!table) return;
        var body = table.querySelector("tbody");
        setInterval(function () {
          var q = "after=" + encodeURIComponent(table.getAttribute("data-next") || "0") + "&limit=200";
          ["type", "source", "run"].forEach(function (k) { var v = table.getAttribute("data-" + k); if (v) q += "&" + k + "=" + encodeURIComponent(v); });
          get("/api/events?" + q).then(function (answer) {
            if (!answer || !answer.events || !answer.events.length) return;
            var none = document.getElementById("no-events");
            if (none) none.remove();
            answer.events.forEach(function (e) {
              var row = document.createElement("tr");
              [["Id", e.id], ["Time", e.time], ["Type", e.type], ["Source", e.source], ["Payload", JSON.stringify(e.payload)]].forEach(function (c, i) {
                var td = document.createElement("td");
                td.setAttribute("data-label", c[0]);
                if (i === 4) { var code = document.createElement("code"); code.textContent = c[1]; td.appendChild(code); } else td.textContent = String(c[1]);
                row.appendChild(td);
              });
              body.insertBefore(row, body.firstChild);
            });
            while (body.rows.length > 500) body.deleteRow(body.rows.length - 1);
            table.setAttribute("data-next", String(answer.next));
          });
        }, 2000);
      }
      function refreshRuns() {
        var table = document.getElementById("runs");
        if (!table) return;
        get("/api/runs?limit=50").then(function (answer) {
          if (!answer || !answer.runs) return;
          var body = table.querySelector("tbody");
          while (body.firstChild) body.removeChild(body.firstChild);
          answer.runs.forEach(function (r) {
            var row = document.createElement("tr");
            row.setAttribute("data-run", r.id);
            var took = r.execution_time != null ? r.execution_time.toFixed(3) + " s" : "";
            [["Run", r.id], ["Task", r.task], ["Status", r.status], ["Attempt", r.attempt], ["Priority", r.priority],
             ["Queued", r.queued_at], ["Took", took], ["Error", (r.error || ((r.omitted || []).indexOf("error") >= 0 ? "(longer than 4 KiB: show the run for it)" : "")).slice(0, 200)]].forEach(function (c, i) {
              var td = document.createElement("td");
              td.setAttribute("data-label", c[0]);
              if (i === 0) { var a = document.createElement("a"); a.href = "/runs/" + encodeURIComponent(r.id); a.textContent = r.id; td.appendChild(a); }
              else if (i === 2) { var s = document.createElement("span"); s.className = "state state-" + r.status; s.setAttribute("data-field", "status"); s.textContent = r.status; td.appendChild(s); }
              else td.textContent = c[1] == null ? "" : String(c[1]);
              row.appendChild(td);
            });
            body.appendChild(row);
          });
        });
      }
      function watchRun() {
        var status = document.getElementById("run-status");
        if (!status || status.getAttribute("data-finished") === "true") return;
        var timer = setInterval(function () {
          get("/api/runs/" + encodeURIComponent(status.getAttribute("data-run"))).then(function (answer) {
            if (!answer || !answer.run) return;
            status.textContent = answer.run.status; status.className = "state state-" + answer.run.status;
            if (["succeeded", "failed", "timed_out", "cancelled", "abandoned"].indexOf(answer.run.status) >= 0) { clearInterval(timer); location.reload(); }
          });
        }, 1000);
      }
      function watchWorkflowRun() {
        var status = document.getElementById("workflow-run-status");
        if (!status || status.getAttribute("data-finished") === "true") return;
        var timer = setInterval(function () {
          get("/api/workflow-runs/" + encodeURIComponent(status.getAttribute("data-run"))).then(function (answer) {
            if (!answer || !answer.run) return;
            var now = [answer.run.status].concat((answer.steps || []).map(function (s) { return s.step + ":" + s.status; })).join(",");
            // Reloaded only when the run moved on: a comment being typed stays while it waits.
            if (now !== status.getAttribute("data-signature")) { clearInterval(timer); location.reload(); }
          });
        }, 1000);
      }
      function refreshFleet() {
        get("/api/fleet").then(function (answer) {
          if (!answer || !answer.agents) return;
          var missing = false;
          answer.agents.forEach(function (a) {
            var row = null;
            document.querySelectorAll("tr[data-agent]").forEach(function (r) { if (r.getAttribute("data-agent") === a.agent_id) row = r; });
            if (!row) { missing = true; return; }
            var state = row.querySelector('[data-field="state"]');
            if (state && state.textContent !== a.state) { state.textContent = a.state; state.className = "state state-" + a.state; }
            var processes = a.processes || {}, names = Object.keys(processes);
            var running = names.filter(function (n) { return processes[n] === "running"; }).length;
            set(row, "host", a.host || "");
            set(row, "version", a.version || "");
            set(row, "processes", running + "/" + names.length + " running");
            var executors = (a.executors || []).map(function (e) { return e.name + " " + e.running + "/" + e.max_concurrent + (e.draining ? " draining" : ""); });
            set(row, "executors", executors.length ? executors.join(", ") : "implicit");
            set(row, "runs", String(a.running_runs || 0));
            set(row, "load", (a.load || 0).toFixed(2));
            set(row, "heartbeat", a.last_heartbeat || "");
            set(row, "ago", (a.seconds_since_heartbeat || 0).toFixed(1) + " s ago");
          });
          set(document, "condition", answer.degraded ? "degraded: " + answer.degraded : "reachable");
          set(document, "backlog", String(answer.backlog || 0));
          // An agent that joined since: the page renders it.
          if (missing) location.reload();
        });
      }
      function settingsErrors() {
        var text = document.getElementById("settings-text");
        if (!text) return;
        document.querySelectorAll("#settings-errors li[data-line]").forEach(function (item) {
          item.addEventListener("click", function () {
            var line = parseInt(item.getAttribute("data-line"), 10), lines = text.value.split("\\n"), at = 0;
            for (var i = 0; i < line - 1 && i < lines.length; i++) at += lines[i].length + 1;
            text.focus(); text.setSelectionRange(at, at + (lines[line - 1] || "").length);
          });
        });
      }
      // The chat: a line joins the history as it is said; the answer streams in as the
      // language model writes it (server-sent events read from the fetch's body).
      function chatLine(cls, who, body) {
        var li = document.createElement("li"); li.className = "msg " + cls;
        var w = document.createElement("span"); w.className = "who"; w.textContent = who;
        li.appendChild(w); li.appendChild(document.createTextNode(" ")); li.appendChild(body);
        document.getElementById("chat-history").appendChild(li);
      }
      function span(t) { var e = document.createElement("span"); e.className = "text"; e.textContent = t; return e; }
      function streamChat() {
        var form = document.getElementById("chat-form");
        if (!form || !window.TextDecoder || !window.ReadableStream) return;
        form.addEventListener("submit", function (event) {
          var input = document.getElementById("chat-text"), text = input.value;
          if (!text.trim()) return;
          event.preventDefault();
          var reply = span("");
          chatLine("msg-user", "you", span(text)); chatLine("msg-bot", "bot", reply);
          reply.id = "chat-streaming"; input.value = "";
          function done(a) {
            reply.textContent = a.ok ? a.text : (a.error || "refused");
            if (!a.ok) reply.className = "text error";
            reply.removeAttribute("id"); reply.setAttribute("data-done", "true");
          }
          fetch("/api/chat", {
            method: "POST", credentials: "same-origin",
            headers: { "Content-Type": "application/json", "Accept": "text/event-stream", "X-CSRF-Token": csrf() },
            body: JSON.stringify({ text: text, conversation: form.querySelector('input[name="conversation"]').value, stream: true })
          }).then(function (r) {
            if (!r.ok || !r.body) return r.json().then(done);
            var reader = r.body.getReader(), decoder = new TextDecoder(), buffer = "";
            function pump() {
              return reader.read().then(function (step) {
                if (step.done) return;
                buffer += decoder.decode(step.value, { stream: true });
                for (var at = buffer.indexOf("\\n\\n"); at >= 0; at = buffer.indexOf("\\n\\n")) {
                  var block = buffer.slice(0, at), name = (block.match(/^event: (.*)$/m) || [])[1], data = (block.match(/^data: (.*)$/m) || [])[1];
                  buffer = buffer.slice(at + 2);
                  if (!data) continue;
                  if (name === "partial") reply.textContent += JSON.parse(data).text;
                  if (name === "answer") done(JSON.parse(data));
                }
                return pump();
              });
            }
            return pump();
          }).catch(function () { done({ ok: false, error: "the agent did not answer" }); });
        });
      }
      // Voice messages: a WAV file, or a recording (MediaRecorder, where the browser allows the
      // microphone) decoded by the browser, mixed down to mono and resampled to 16 kHz in the
      // page (OfflineAudioContext: nothing leaves the page but the WAV), sent as 16-bit WAV.
      function mono16k(buffer) {
        var context = new OfflineAudioContext(1, Math.max(1, Math.ceil(buffer.duration * 16000)), 16000);
        var source = context.createBufferSource();
        source.buffer = buffer; source.connect(context.destination); source.start();
        return context.startRendering();
      }
      function wav(buffer) {
        var data = buffer.getChannelData(0), out = new DataView(new ArrayBuffer(44 + data.length * 2));
        function text(at, s) { for (var i = 0; i < s.length; i++) out.setUint8(at + i, s.charCodeAt(i)); }
        text(0, "RIFF"); out.setUint32(4, 36 + data.length * 2, true); text(8, "WAVEfmt ");
        out.setUint32(16, 16, true); out.setUint16(20, 1, true); out.setUint16(22, 1, true);
        out.setUint32(24, buffer.sampleRate, true); out.setUint32(28, buffer.sampleRate * 2, true);
        out.setUint16(32, 2, true); out.setUint16(34, 16, true); text(36, "data"); out.setUint32(40, data.length * 2, true);
        for (var i = 0; i < data.length; i++) out.setInt16(44 + i * 2, Math.max(-1, Math.min(1, data[i])) * 32767, true);
        return new Blob([out], { type: "audio/wav" });
      }
      function voiceChat() {
        var form = document.getElementById("voice-form");
        if (!form) return;
        var status = document.getElementById("voice-status"), recorded = null, line = chatLine;
        form.addEventListener("submit", function (event) {
          event.preventDefault();
          var file = recorded || document.getElementById("voice-file").files[0];
          if (!file) { status.textContent = "choose a WAV file or record first"; return; }
          var speak = document.getElementById("voice-speak").checked;
          status.textContent = "recognising…";
          fetch("/api/chat/voice?conversation=" + encodeURIComponent(form.getAttribute("data-conversation")) + "&speak=" + speak, {
            method: "POST", body: file, credentials: "same-origin",
            headers: { "Content-Type": "audio/wav", "Accept": "application/json", "X-CSRF-Token": csrf() }
          }).then(function (r) { return r.json(); }).then(function (a) {
            if (!a.ok) { status.textContent = a.error || "refused"; return; }
            status.textContent = "";
            line("msg-user", "you (voice, " + a.transcript_confidence.toFixed(2) + ")", span(a.transcript));
            var reply = span(a.text);
            if (a.speech) {
              var audio = document.createElement("audio"); audio.controls = true;
              var raw = atob(a.speech), pcm = new Uint8Array(raw.length);
              for (var k = 0; k < raw.length; k++) pcm[k] = raw.charCodeAt(k);
              audio.src = URL.createObjectURL(new Blob([pcm], { type: "audio/wav" }));
              reply.appendChild(audio); audio.play().catch(function () {});
            }
            line("msg-bot", "bot", reply);
            recorded = null;
          }).catch(function () { status.textContent = "the agent did not answer"; });
        });
        var button = document.getElementById("voice-record");
        if (!window.MediaRecorder || !navigator.mediaDevices) return;
        button.hidden = false;
        var recorder = null;
        button.addEventListener("click", function () {
          if (recorder) { recorder.stop(); return; }
          navigator.mediaDevices.getUserMedia({ audio: true }).then(function (stream) {
            var chunks = [];
            recorder = new MediaRecorder(stream);
            recorder.ondataavailable = function (e) { chunks.push(e.data); };
            recorder.onstop = function () {
              stream.getTracks().forEach(function (t) { t.stop(); });
              recorder = null; button.textContent = "Record";
              new Blob(chunks).arrayBuffer().then(function (b) { return new AudioContext().decodeAudioData(b); }).then(mono16k)
                .then(function (buffer) { recorded = wav(buffer); status.textContent = "recorded " + buffer.duration.toFixed(1) + " s; send it"; });
            };
            recorder.start(); button.textContent = "Stop"; status.textContent = "recording…";
          }).catch(function (e) { status.textContent = "no microphone: " + e.message; });
        });
      }
      document.querySelectorAll('input[name="csrf"]').forEach(function (input) { if (!input.value) input.value = csrf(); });
      if (page === "chat") { streamChat(); voiceChat(); }
      if (page === "processes" || page === "process") setInterval(refreshProcesses, 2000);
      if (page === "process") followLog();
      if (page === "events") followEvents();
      if (page === "settings") settingsErrors();
      if (page === "tasks") setInterval(refreshRuns, 2000);
      if (page === "fleet") setInterval(refreshFleet, 2000);
      if (page === "run") watchRun();
      if (page === "workflowRun") watchWorkflowRun();
    })();

    """
}
