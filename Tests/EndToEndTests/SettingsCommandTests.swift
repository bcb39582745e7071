import AgentTestSupport
import AgentVersion
import Foundation
import JSONSchema
import Testing

/// `settings_get`, `settings_change`, `validate`, `modules` and `diagnostics` against a real
/// detached agent: its control socket, its settings file on disk, its workers.
@Suite(.ownThreads, .serialized) struct SettingsCommandTests {
    static let secret = "CFG-S3CR3T-VALUE-42"

    /// A detached agent in a temporary folder, stopped at the end.
    final class Agent {
        let directory: String
        var settings: String { directory + "/settings.json" }
        var socket: String { directory + "/.agent/run/control.sock" }
        let environment: [String: String]

        init(_ text: String, environment: [String: String] = [:], prepare: (String) throws -> Void = { _ in }) throws {
            directory = TestPaths.temporaryDirectory("settings-commands")
            self.environment = environment
            try text.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
            try prepare(directory)
            let started = try control(["start", "--no-build"])
            #expect(started.status == 0, "\(started.stdout)\(started.stderr)")
        }

        deinit {
            _ = try? control(["stop", "--timeout", "20"])
            try? FileManager.default.removeItem(atPath: directory)
        }

        @discardableResult
        func control(_ arguments: [String]) throws -> ProgramResult {
            let command = arguments[0] == "settings" ? Array(arguments.prefix(2)) : [arguments[0]]
            return try runProgram("agent-control", command + ["--settings", settings] + arguments.dropFirst(command.count), environment: environment)
        }

        /// One request on the control socket; its answer as text and as JSON.
        func request(_ request: JSONValue, timeout: Double = 60) throws -> (text: String, json: JSONValue) {
            let client = try #require(RawControlClient(path: socket))
            client.send(request.serialized())
            let line = try #require(client.readLine(timeout: timeout))
            return (line, try JSONValue.parse(line))
        }

        var bytes: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: settings)))) ?? [] }
        var text: String { String(decoding: bytes, as: UTF8.self) }

        func pids() throws -> [String: Int] {
            let status = try request(["command": "status"]).json
            var pids: [String: Int] = [:]
            for process in status["processes"]?.arrayValue ?? [] {
                if let name = process["name"]?.stringValue, process["state"]?.stringValue == "running",
                   let pid = process["pid"]?.numberValue?.intValue { pids[name] = pid }
            }
            return pids
        }

        /// Waits until `names` (and only they) run; returns their pids.
        @discardableResult
        func waitUntilRunning(_ names: Set<String>, timeout: Double = 45) throws -> [String: Int] {
            let deadline = Date().addingTimeInterval(timeout)
            var pids = try self.pids()
            while Set(pids.keys) != names, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                pids = try self.pids()
            }
            #expect(Set(pids.keys) == names, "running: \(pids.keys.sorted()), expected \(names.sorted())")
            return pids
        }

        /// The folder's entries other than `.agent` (a temporary file left behind shows here).
        var folderEntries: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0 != ".agent" }.sorted()
        }
    }

    /// Formatting a serializer would not keep: four-space indentation, an aligned value,
    /// inline objects, a key order that is not sorted, an env reference, a blank line.
    static let settings = """
    {
        "processes": {
            "trades": {"type": "trade_feed", "interval": 0.05, "pairs": ["ETH/USD", "${env:CFG_PAIR}"]},

            "busy":   {"type": "trade_frequency", "window": 5, "threshold": 100}
        },
        "enabled_modules": [ "sample" ]
    }

    """

    static let environment = ["CFG_PAIR": "BTC/EUR"]

    @Test func eachChangeKindRoundTripsAndLeavesTheRestOfTheFileByteForByte() throws {
        let agent = try Agent(Self.settings, environment: Self.environment)
        let original = agent.bytes
        var pids = try agent.waitUntilRunning(["trades", "busy"])

        // Disable, then enable a process: "enabled": false is added, then removed, and the
        // file is as it was, byte for byte.
        var result = try agent.control(["settings", "disable-process", "busy"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("kept: trades; restarted: -; started: -; stopped: busy"), "\(result.stdout)")
        #expect(agent.text == Self.settings.replacingOccurrences(of: #""threshold": 100}"#, with: #""threshold": 100, "enabled": false}"#), "\(agent.text)")
        #expect(try agent.waitUntilRunning(["trades"])["trades"] == pids["trades"])
        result = try agent.control(["settings", "enable-process", "busy"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("started: busy"), "\(result.stdout)")
        #expect(agent.bytes == original, "\(agent.text)")
        pids = try agent.waitUntilRunning(["trades", "busy"])

        // Add, change, remove a process.
        result = try agent.control(["settings", "add-process", "more", "--json", #"{"type": "trade_feed", "interval": 0.5}"#])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("kept: trades, busy; restarted: -; started: more; stopped: -"), "\(result.stdout)")
        #expect(agent.text == Self.settings.replacingOccurrences(of: #""threshold": 100}"#, with: #""threshold": 100},"# + "\n        " + #""more": {"type": "trade_feed", "interval": 0.5}"#), "\(agent.text)")
        let withMore = try agent.waitUntilRunning(["trades", "busy", "more"])
        #expect(withMore["trades"] == pids["trades"] && withMore["busy"] == pids["busy"])
        result = try agent.control(["settings", "set-process", "more", "--json", #"{"type": "trade_feed", "interval": 0.25, "pairs": ["A/B"]}"#])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("restarted: more"), "\(result.stdout)")
        #expect(agent.text.contains(#""more": {"type": "trade_feed", "interval": 0.25, "pairs": ["A/B"]}"#), "\(agent.text)")
        let restarted = try agent.waitUntilRunning(["trades", "busy", "more"])
        #expect(restarted["more"] != withMore["more"] && restarted["trades"] == pids["trades"])
        result = try agent.control(["settings", "remove-process", "more"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("stopped: more"), "\(result.stdout)")
        #expect(agent.bytes == original, "\(agent.text)")
        try agent.waitUntilRunning(["trades", "busy"])

        // Enable, then disable a module.
        result = try agent.control(["settings", "enable-module", "system"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(agent.text == Self.settings.replacingOccurrences(of: #"[ "sample" ]"#, with: #"[ "sample", "system" ]"#), "\(agent.text)")
        result = try agent.control(["settings", "disable-module", "system"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(agent.bytes == original, "\(agent.text)")

        // Several changes at once, applied together: a module and a process of its type.
        var answer = try agent.request(["command": "settings_change", "changes": [
            ["action": "enable_module", "name": "system"],
            ["action": "add_process", "name": "host", "settings": ["type": "host_stats", "interval": 1]],
        ]]).json
        #expect(answer["ok"] == true && answer["changed"] == true, "\(answer)")
        #expect(answer["started"] == ["host"] && answer["kept"] == ["trades", "busy"], "\(answer)")
        try agent.waitUntilRunning(["trades", "busy", "host"])

        // Replace the whole document (a settings editor's save): the text as sent.
        let replacement = Self.settings.replacingOccurrences(of: #""window": 5"#, with: #""window": 7"#)
        answer = try agent.request(["command": "settings_change", "action": "replace", "text": .string(replacement)]).json
        #expect(answer["ok"] == true, "\(answer)")
        #expect(answer["restarted"] == ["busy"] && answer["stopped"] == ["host"] && answer["kept"] == ["trades"], "\(answer)")
        #expect(agent.text == replacement)
        try agent.waitUntilRunning(["trades", "busy"])

        // A change that makes no difference writes nothing and says so.
        let before = try FileManager.default.attributesOfItem(atPath: agent.settings)[.modificationDate] as? Date
        result = try agent.control(["settings", "disable-module", "system"])
        #expect(result.status == 1 && result.stderr.contains(#"module "system" is not enabled"#), "\(result.stderr)")
        result = try agent.control(["settings", "enable-module", "sample"])
        #expect(result.status == 0 && result.stdout.contains("no change"), "\(result.stdout)")
        #expect(try FileManager.default.attributesOfItem(atPath: agent.settings)[.modificationDate] as? Date == before)
        #expect(agent.text == replacement)

        // Every change is in the run history (the command layer's audit), with its result.
        let history = try agent.control(["history", "--limit", "1000"]).stdout
        #expect(history.contains("busy  audit  control: settings_change disable_process busy → written (hash "), "\(history)")
        #expect(history.contains("audit  control: settings_change enable_module system; add_process host → written"), "\(history)")
        #expect(history.contains("audit  control: settings_change enable_module sample → no change"), "\(history)")
        #expect(history.contains("audit  control: settings_change disable_module system → refused (not_found)"), "\(history)")
        #expect(agent.folderEntries == ["settings.json"])
    }

    @Test func anInvalidChangeReturnsEveryErrorAtItsPointerAndChangesNothing() throws {
        let agent = try Agent(Self.settings, environment: Self.environment)
        let original = agent.bytes
        let pids = try agent.waitUntilRunning(["trades", "busy"])

        let answer = try agent.request(["command": "settings_change", "changes": [
            ["action": "set_process", "name": "busy", "settings": ["type": "trade_frequency", "window": -1, "threshold": 100]],
            ["action": "add_process", "name": "more", "settings": ["type": "trade_feed", "interval": "fast", "bogus": true]],
            ["action": "add_process", "name": "other", "settings": ["type": "trade_fed"]],
        ]]).json
        #expect(answer["ok"] == false && answer["code"] == "invalid", "\(answer)")
        let errors = answer["errors"]?.arrayValue ?? []
        let pointers = Set(errors.compactMap { $0["pointer"]?.stringValue })
        #expect(pointers == ["/processes/busy/window", "/processes/more/interval", "/processes/more", "/processes/other/type"], "\(answer)")
        #expect(errors.allSatisfy { $0["file"]?.stringValue?.hasSuffix("/settings.json") == true && $0["message"]?.stringValue?.isEmpty == false })
        #expect(errors.contains { $0["message"]?.stringValue?.contains(#"did you mean "trade_feed""#) == true }, "\(errors)")
        #expect(agent.bytes == original)
        #expect(agent.folderEntries == ["settings.json"])
        #expect(try agent.pids() == pids)

        // The CLI: every error, exit status 2, and still nothing written.
        let result = try agent.control(["settings", "add-process", "more", "--json", #"{"type": "trade_feed", "interval": "fast", "bogus": 1}"#])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("/processes/more/interval: expected a number"), "\(result.stderr)")
        #expect(result.stderr.contains(#"/processes/more: unknown property "bogus""#), "\(result.stderr)")
        #expect(agent.bytes == original)

        // Changes that do not fit the document: each says why, with its own code.
        var refused = try agent.request(["command": "settings_change", "action": "remove_process", "name": "trdes"]).json
        #expect(refused["code"] == "not_found" && refused["error"]?.stringValue?.contains(#"did you mean "trades""#) == true, "\(refused)")
        refused = try agent.request(["command": "settings_change", "action": "add_process", "name": "trades", "settings": ["type": "trade_feed"]]).json
        #expect(refused["code"] == "conflict", "\(refused)")
        refused = try agent.request(["command": "settings_change", "action": "enable_modul", "name": "x"]).json
        #expect(refused["code"] == "invalid" && refused["pointer"] == "/action", "\(refused)")
        #expect(refused["error"]?.stringValue?.contains(#"did you mean "enable_module""#) == true, "\(refused)")
        refused = try agent.request(["command": "settings_change", "changes": [["action": "add_process", "name": "x", "settings": 3]]]).json
        #expect(refused["code"] == "invalid" && refused["pointer"] == "/changes/0/settings", "\(refused)")
        refused = try agent.request(["command": "settings_change", "action": "replace", "text": "{\"enabled_modules\": [}"]).json
        #expect(refused["code"] == "invalid" && refused["error"]?.stringValue?.contains("not valid JSON at line 1") == true, "\(refused)")
        #expect(agent.bytes == original)
        #expect(try agent.pids() == pids)
        #expect(try agent.control(["settings", "add-process", "x", "--json", "[1]"]).status == 64)
    }

    /// Webhook headers and URL, and a process's setting, all from the environment: the value
    /// is in no answer of any command (nor in the CLI's output).
    @Test func aValueFromTheEnvironmentIsInNoAnswer() throws {
        let settings = """
        {"enabled_modules": ["sample"],
         "outputs": [{"type": "webhook", "url": "http://127.0.0.1:1/${env:CFG_SECRET}?token=${env:CFG_SECRET}",
                      "headers": {"Authorization": "Bearer ${env:CFG_SECRET}"}, "kinds": ["event"], "batch_interval": 0.05}],
         "processes": {"trades": {"type": "trade_feed", "interval": 0.05, "pairs": ["${env:CFG_SECRET}"]}}}
        """
        let agent = try Agent(settings, environment: ["CFG_SECRET": Self.secret])
        try agent.waitUntilRunning(["trades"])
        var answers: [String] = []
        let got = try agent.request(["command": "settings_get"])
        #expect(got.json["text"]?.stringValue == settings)
        #expect(got.json["settings"]?["outputs"]?[0]?["headers"]?["Authorization"] == "Bearer ${env:CFG_SECRET}")
        answers.append(got.text)
        answers.append(try agent.request(["command": "validate"]).text)
        let invalid = settings.replacingOccurrences(of: #""interval": 0.05"#, with: #""interval": "${env:CFG_SECRET}""#)
        let validated = try agent.request(["command": "validate", "text": .string(invalid)])
        #expect(validated.json["valid"] == false)
        #expect(validated.text.contains("found a string from ${env:CFG_SECRET} (not shown)"), "\(validated.text)")
        answers.append(validated.text)
        let refused = try agent.request(["command": "settings_change", "action": "set_process", "name": "trades",
                                         "settings": ["type": "trade_feed", "interval": "${env:CFG_SECRET}"]])
        #expect(refused.json["code"] == "invalid" && refused.text.contains("${env:CFG_SECRET} (not shown)"), "\(refused.text)")
        answers.append(refused.text)
        let changed = try agent.request(["command": "settings_change", "action": "set_process", "name": "trades",
                                         "settings": ["type": "trade_feed", "interval": 0.1, "pairs": ["${env:CFG_SECRET}", "X/Y"]]])
        #expect(changed.json["ok"] == true, "\(changed.text)")
        answers.append(changed.text)
        #expect(agent.text.contains(#""pairs": ["${env:CFG_SECRET}", "X/Y"]"#))
        // The webhook fails (nothing listens on port 1): its last error is in the answers below.
        let deadline = Date().addingTimeInterval(20)
        var output = try agent.request(["command": "diagnostics"]).json["outputs"]?[0]
        while output?["last_error"]?.stringValue == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            output = try agent.request(["command": "diagnostics"]).json["outputs"]?[0]
        }
        #expect(output?["type"] == "webhook" && output?["last_error"]?.stringValue != nil, "\(String(describing: output))")
        for command in ["modules", "diagnostics", "status"] { answers.append(try agent.request(["command": .string(command)]).text) }
        for arguments in [["settings", "show"], ["settings", "show", "--json"], ["modules", "--json"], ["diagnostics"], ["diagnostics", "--json"],
                          ["settings", "set-process", "trades", "--json", #"{"type": "trade_feed", "interval": "${env:CFG_SECRET}"}"#]] {
            let result = try agent.control(arguments)
            answers.append(result.stdout + result.stderr)
        }
        #expect(answers[answers.count - 1].contains("${env:CFG_SECRET} (not shown)"), "\(answers[answers.count - 1])")
        for answer in answers { #expect(!answer.contains(Self.secret), "\(answer)") }
    }

    @Test func aChangeAgainstAnOlderReadingOfTheFileIsRefusedAsAFailedPrecondition() throws {
        let agent = try Agent(Self.settings, environment: Self.environment)
        let read = try agent.request(["command": "settings_get"]).json
        let hash = try #require(read["hash"]?.stringValue)
        // Edited by hand meanwhile.
        let edited = Self.settings.replacingOccurrences(of: #""threshold": 100"#, with: #""threshold": 90"#)
        try edited.write(toFile: agent.settings, atomically: true, encoding: .utf8)
        let refused = try agent.request(["command": "settings_change", "action": "disable_process", "name": "trades", "if_match": .string(hash)]).json
        #expect(refused["ok"] == false && refused["code"] == "precondition_failed", "\(refused)")
        #expect(agent.text == edited)
        let cli = try agent.control(["settings", "disable-process", "trades", "--if-match", hash])
        #expect(cli.status == 1 && cli.stderr.contains("changed since it was read"), "\(cli.stderr)")
        // With the hash of what is there now, the change goes through (and keeps the edit).
        let current = try #require(try agent.request(["command": "settings_get"]).json["hash"]?.stringValue)
        #expect(current != hash)
        let done = try agent.request(["command": "settings_change", "action": "disable_process", "name": "trades", "if_match": .string(current)]).json
        #expect(done["ok"] == true && done["stopped"] == ["trades"] && done["restarted"] == ["busy"], "\(done)")
        #expect(agent.text.contains(#""threshold": 90"#) && agent.text.contains(#""enabled": false"#))
        #expect(done["hash"] == (try agent.request(["command": "settings_get"]).json["hash"]))
    }

    @Test func theWriteReplacesTheFileAtomicallyKeepingItsModeAndLink() throws {
        let agent = try Agent(Self.settings, environment: Self.environment) { directory in
            // settings.json is a link to the real file in another folder.
            let real = directory + "/config/agent.json"
            try FileManager.default.createDirectory(atPath: directory + "/config", withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: directory + "/settings.json", toPath: real)
            try FileManager.default.createSymbolicLink(atPath: directory + "/settings.json", withDestinationPath: "config/agent.json")
            #expect(chmod(real, 0o640) == 0)
        }
        let real = agent.directory + "/config/agent.json"
        var before = stat()
        #expect(stat(real, &before) == 0)
        let result = try agent.control(["settings", "disable-process", "busy"])
        #expect(result.status == 0, "\(result.stderr)")
        var after = stat(), link = stat()
        #expect(stat(real, &after) == 0 && lstat(agent.settings, &link) == 0)
        #expect(link.st_mode & S_IFMT == S_IFLNK, "the link stays a link")
        #expect(after.st_mode & 0o7777 == 0o640)
        #expect(after.st_ino != before.st_ino, "a new file renamed over the old one")
        #expect(after.st_uid == before.st_uid && after.st_gid == before.st_gid)
        #expect(try String(contentsOfFile: real, encoding: .utf8).contains(#""enabled": false"#))
        #expect(agent.folderEntries == ["config", "settings.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: agent.directory + "/config") == ["agent.json"])
    }

    @Test func validateGivesTheReportOfValidateSettings() throws {
        let agent = try Agent(Self.settings, environment: Self.environment)
        let document = Self.settings.replacingOccurrences(of: #""window": 5"#, with: #""window": "five", "extra": 1"#)
        let answer = try agent.request(["command": "validate", "text": .string(document)]).json
        #expect(answer["ok"] == true && answer["valid"] == false, "\(answer)")
        // The same document through validate-settings --json, from a file at the same path.
        let copy = TestPaths.temporaryDirectory("validate-copy")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try document.write(toFile: copy + "/settings.json", atomically: true, encoding: .utf8)
        let cli = try runProgram("validate-settings", ["--settings", copy + "/settings.json", "--no-build", "--json"], environment: Self.environment)
        #expect(cli.status == 2)
        let report = try JSONValue.parse(cli.stdout)
        func withoutFiles(_ value: JSONValue?) -> [JSONValue] {
            (value?.arrayValue ?? []).map { item in
                guard case .object(var object) = item else { return item }
                object["file"] = nil
                return .object(object)
            }
        }
        #expect(withoutFiles(answer["errors"]) == withoutFiles(report["errors"]), "\(answer)\n\(report)")
        #expect(withoutFiles(answer["errors"]).count == 2)
        #expect(answer["processes"]?.arrayValue?.count == report["processes"]?.arrayValue?.count)
        // As an object, and the file itself.
        let asObject = try agent.request(["command": "validate", "settings": try JSONValue.parse(document)]).json
        #expect(withoutFiles(asObject["errors"]) == withoutFiles(report["errors"]))
        let file = try agent.request(["command": "validate"]).json
        #expect(file["ok"] == true && file["valid"] == true && file["errors"] == [], "\(file)")
        let notJSON = try agent.request(["command": "validate", "text": "{"]).json
        #expect(notJSON["valid"] == false && notJSON["errors"]?[0]?["pointer"] == "", "\(notJSON)")
        #expect(agent.bytes == Array(Self.settings.utf8))
    }

    @Test func modulesAndDiagnosticsDescribeTheRunningAgent() throws {
        let agent = try Agent(Self.settings, environment: Self.environment)
        try agent.waitUntilRunning(["trades", "busy"])
        let modules = try agent.request(["command": "modules"]).json
        #expect(modules["ok"] == true, "\(modules)")
        let list = modules["modules"]?.arrayValue ?? []
        #expect(list.compactMap { $0["name"]?.stringValue } == ["sample", "chat"])
        let feed = list.first?["process_types"]?.arrayValue?.first { $0["type"] == "trade_feed" }
        #expect(feed?["kind"] == "datasource")
        #expect(feed?["settings_schema"]?["properties"]?["interval"] != nil, "\(String(describing: feed))")
        #expect(list.last?["builtin"] == true && list.last?["process_types"]?[0]?["kind"] == "chatbot")
        #expect(modules["host_schema"]?["properties"]?["enabled_modules"] != nil)
        let table = try agent.control(["modules"])
        #expect(table.status == 0 && table.stdout.contains("trade_feed") && table.stdout.contains("datasource"), "\(table.stdout)")

        let diagnostics = try agent.request(["command": "diagnostics"]).json
        #expect(diagnostics["ok"] == true, "\(diagnostics)")
        #expect(diagnostics["versions"]?["agent_runtime"]?.stringValue == AgentVersion.current)
        let settingsPath = URL(fileURLWithPath: agent.settings).standardizedFileURL.path
        #expect(diagnostics["paths"]?["settings"]?.stringValue == settingsPath)
        #expect(diagnostics["paths"]?["socket"]?.stringValue == URL(fileURLWithPath: agent.socket).standardizedFileURL.path)
        #expect(diagnostics["paths"]?["store"]?.stringValue?.hasSuffix("/.agent/data/agent.sqlite") == true)
        #expect(diagnostics["store"]?["enabled"] == true && diagnostics["store"]?["committed"]?.numberValue != nil)
        #expect(diagnostics["fork_server"]?["enabled"] != nil)
        #expect(diagnostics["limits"]?["control"]?["max_connections"] == 64)
        #expect((diagnostics["limits"]?["files"]?["soft"]?.numberValue?.intValue ?? 0) > 0)
        #expect(["cgroup", "process_groups"].contains(diagnostics["limits"]?["containment"]?.stringValue ?? ""))
        #expect(diagnostics["agent"]?["workers"] == 2)
        let text = try agent.control(["diagnostics"])
        #expect(text.status == 0 && text.stdout.contains("agent_runtime: \(AgentVersion.current)") && text.stdout.contains("settings: \(settingsPath)"), "\(text.stdout)")
    }

    /// The same commands over HTTP, through the routes CommandCatalog declares for them.
    @Test func theSettingsCommandsAnswerOverHTTP() throws {
        let settings = Self.settings.replacingOccurrences(of: #""enabled_modules": [ "sample" ]"#,
                                                          with: #""enabled_modules": [ "sample" ],"# + "\n    " + #""http": {"listen": "127.0.0.1:0", "tokens": ["${env:CFG_API_TOKEN}"]}"#)
        let token = "cfg-api-token-0123456789"
        let agent = try Agent(settings, environment: Self.environment.merging(["CFG_API_TOKEN": token]) { $1 })
        let log = agent.directory + "/.agent/log/agent.log"
        let deadline = Date().addingTimeInterval(30)
        var port: String?
        while port == nil, Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: "http: listening on http://127.0.0.1:") {
                port = String(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        let base = "http://127.0.0.1:\(try #require(port))"
        func call(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> (status: Int, json: JSONValue) {
            var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)", "-X", method, base + path]
            if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body.serialized()] }
            let result = try runProgram("/usr/bin/curl", arguments, timeout: 60)
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, (try? JSONValue.parse(lines.dropLast().joined(separator: "\n"))) ?? .null)
        }
        let got = try call("GET", "/api/settings")
        #expect(got.status == 200 && got.json["text"]?.stringValue == settings, "\(got)")
        let invalid = try call("POST", "/api/settings/changes", ["action": "add_process", "name": "more", "settings": ["type": "trade_feed", "interval": "fast"]])
        #expect(invalid.status == 400 && invalid.json["errors"]?[0]?["pointer"] == "/processes/more/interval", "\(invalid)")
        let missing = try call("POST", "/api/settings/changes", ["action": "remove_process", "name": "nope"])
        #expect(missing.status == 404 && missing.json["code"] == "not_found", "\(missing)")
        let stale = try call("POST", "/api/settings/changes", ["action": "disable_process", "name": "busy", "if_match": "0-0"])
        #expect(stale.status == 412 && stale.json["code"] == "precondition_failed", "\(stale)")
        #expect(agent.text == settings)
        let done = try call("POST", "/api/settings/changes", ["changes": [["action": "disable_process", "name": "busy"]],
                                                              "if_match": got.json["hash"] ?? .null])
        #expect(done.status == 200 && done.json["stopped"] == ["busy"], "\(done)")
        let validated = try call("POST", "/api/validate", ["text": "{}"])
        #expect(validated.status == 200 && validated.json["valid"] == false, "\(validated)")
        #expect(try call("GET", "/api/modules").json["modules"]?[0]?["name"] == "sample")
        #expect(try call("GET", "/api/diagnostics").json["paths"]?["settings"] != nil)
        let history = try agent.control(["history"]).stdout
        #expect(history.contains("busy  audit  http"), "\(history)")
    }

    /// Checking a document that enables a module not described yet waits for its describe
    /// worker; the loop does not: status answers meanwhile, and a worker that dies meanwhile
    /// (after which the supervisor kills the children that are not its workers) leaves the
    /// describe worker alone.
    @Test func aSlowDescribeHoldsNeitherTheLoopNorItsOwnWorker() throws {
        let manifest = #"{"name":"slowdescribe","version":"0.1.0","processes":[{"type":"ticker","kind":"datasource","description":"ticks","settings_schema":{"type":"object"}}]}"#
        let library = try CModuleFixture.build("slowdescribe", source: """
        #include <agent_module.h>
        #include <unistd.h>
        __attribute__((constructor)) static void slow(void) { sleep(3); }
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el;
            return AGENT_OK;
        }
        static const agent_module description = {
            .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
            .manifest_json = "\(manifest.replacingOccurrences(of: "\"", with: "\\\""))", .run_process = run,
        };
        const agent_module *agent_module_entry(void) { return &description; }
        """)
        let agent = try Agent(Self.settings, environment: Self.environment)
        let pids = try agent.waitUntilRunning(["trades", "busy"])
        let document = Self.settings.replacingOccurrences(of: #"[ "sample" ]"#, with: #"[ "sample", "\#(library)" ]"#)
        let slow = try #require(RawControlClient(path: agent.socket))
        slow.send(JSONValue.object(["command": "validate", "text": .string(document)]).serialized())
        // The loop answers while the module is being described, and restarts a killed worker.
        #expect(kill(Int32(try #require(pids["trades"])), SIGKILL) == 0)
        let deadline = Date().addingTimeInterval(30)
        var restarted = try agent.pids()
        while restarted["trades"] == nil || restarted["trades"] == pids["trades"], Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            restarted = try agent.pids()
        }
        #expect(restarted["trades"] != nil && restarted["trades"] != pids["trades"], "\(restarted)")
        var poller = pollfd(fd: slow.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 0) == 0, "the validation answered before status: it did not wait for the describe")
        let answer = try JSONValue.parse(try #require(slow.readLine(timeout: 60)))
        #expect(answer["ok"] == true && answer["valid"] == true, "\(answer)")
        #expect(answer["modules"]?[1]?["available"] == true && answer["modules"]?[1]?["process_types"] == ["ticker"], "\(answer)")
    }

    /// `reload` checks the file on disk off the loop too: while a module it now enables is
    /// described, status answers and a killed worker is restarted; then the reload applies.
    @Test func aReloadDescribingASlowModuleDoesNotHoldTheLoop() throws {
        let manifest = #"{"name":"slowreload","version":"0.1.0","processes":[{"type":"ticker","kind":"datasource","description":"ticks","settings_schema":{"type":"object"}}]}"#
        let library = try CModuleFixture.build("slowreload", source: """
        #include <agent_module.h>
        #include <unistd.h>
        __attribute__((constructor)) static void slow(void) { sleep(3); }
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)e; (void)el;
            while (!h->stop_requested(h->host_ctx)) usleep(20000);
            return AGENT_OK;
        }
        static const agent_module description = {
            .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
            .manifest_json = "\(manifest.replacingOccurrences(of: "\"", with: "\\\""))", .run_process = run,
        };
        const agent_module *agent_module_entry(void) { return &description; }
        """)
        let agent = try Agent(Self.settings, environment: Self.environment)
        let pids = try agent.waitUntilRunning(["trades", "busy"])
        let document = Self.settings.replacingOccurrences(of: #"[ "sample" ]"#, with: #"[ "sample", "\#(library)" ]"#)
        try document.write(toFile: agent.settings, atomically: true, encoding: .utf8)
        let reloading = try #require(RawControlClient(path: agent.socket))
        reloading.send(#"{"command": "reload"}"#)
        #expect(kill(Int32(try #require(pids["trades"])), SIGKILL) == 0)
        let deadline = Date().addingTimeInterval(30)
        var restarted = try agent.pids()
        while restarted["trades"] == nil || restarted["trades"] == pids["trades"], Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            restarted = try agent.pids()
        }
        #expect(restarted["trades"] != nil && restarted["trades"] != pids["trades"], "\(restarted)")
        var poller = pollfd(fd: reloading.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 0) == 0, "the reload answered before status: it did not wait for the describe")
        let answer = try JSONValue.parse(try #require(reloading.readLine(timeout: 60)))
        #expect(answer["ok"] == true, "\(answer)")
        #expect(answer["kept"]?.arrayValue?.contains("busy") == true, "\(answer)")
    }

    @Test func theSettingsCommandsSayWhenTheAgentIsNotRunning() throws {
        let directory = TestPaths.temporaryDirectory("settings-commands-off")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        for arguments in [["settings", "show"], ["settings", "enable-module", "system"], ["modules"], ["diagnostics", "--json"]] {
            let result = try runProgram("agent-control", arguments, in: directory)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
        }
        for arguments in [["settings", "--help"], ["settings", "add-process", "--help"], ["modules", "--help"], ["diagnostics", "--help"]] {
            let result = try runProgram("agent-control", arguments, in: directory)
            #expect(result.status == 0 && result.stdout.contains("USAGE"), "\(arguments): \(result.stdout)")
        }
        #expect(try String(contentsOfFile: directory + "/settings.json", encoding: .utf8) == Self.settings)
    }
}
