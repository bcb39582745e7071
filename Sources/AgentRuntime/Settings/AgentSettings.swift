import AgentBase
import AgentCommands
import AgentCore
import AgentOutputs
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// An agent's `settings.json`: the modules it enables and the processes it runs.
///
/// ```json
/// {"enabled_modules": ["sample"],
///  "processes": {"trades": {"type": "trade_feed", "enabled": true, "interval": 0.5}}}
/// ```
///
/// Reading checks the first layer (the ``HostSchema``); ``hostIssues`` holds what it found,
/// and everything that could be read is kept so that the second layer (each process's type
/// schema) can still report its own problems in the same run.
public struct AgentSettings: Sendable {
    /// The settings file's path, as given.
    public var file: String
    /// The folder of the settings file: the agent's folder.
    public var agentDirectory: String
    /// Modules to load, in order.
    public var enabledModules: [String]
    /// Every configured process, in file order (disabled ones included).
    public var processes: [ProcessSettings]
    /// Problems found by the host schema.
    public var hostIssues: [SettingsIssue]
    /// The `store` section.
    public var store: StoreSettings
    /// The `log` section: the rotation of a detached agent's log file.
    public var log: LogSettings
    /// The whole document.
    public var document: JSONValue
    /// `"trust_module_files": true`: load module files even when another user could change
    /// them (see ``ModuleLocator/checkTrust(_:userID:)``).
    public var trustModuleFiles: Bool
    /// `"http"`: the HTTP API and dashboard (nil: off).
    public var http: HTTPSettings?
    /// The `fleet` section (nil: this agent keeps its runs and schedules to itself).
    public var fleet: FleetSettings?
    /// `"events"`: the largest published payload and the declared event types.
    public var events = EventSettings()
    /// `"tasks"`: the definitions that passed the host layer (module task types are checked
    /// against the modules by the ``SettingsValidator``).
    public var tasks: [TaskDefinition] = []
    /// `"schedules"`: the ones whose own keys are valid (their target task is checked by the
    /// ``SettingsValidator``).
    public var schedules: [ScheduleDefinition] = []
    /// `"workflows"`: the ones whose steps are valid (their tasks are checked by the
    /// ``SettingsValidator``).
    public var workflows: [WorkflowDefinition] = []
    /// Every workflow as far as its steps could be read (their task steps are checked too).
    var workflowDrafts: [WorkflowDefinition] = []

    /// Reads a settings file. Throws only if it cannot be read or is not JSON; other problems
    /// are in ``hostIssues``.
    public static func load(file: String) throws(SettingsError) -> AgentSettings {
        let data = try readFile(file)
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            throw SettingsError([SettingsIssue(file: file, pointer: error.pointer, message: "not valid JSON at line \(error.line), column \(error.column): \(error.message)")])
        }
        return AgentSettings(json: value, file: file)
    }

    public init(json: JSONValue, file: String) {
        self.file = file
        document = json
        agentDirectory = URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
        hostIssues = HostSchema.validator.validate(json).map { error in
            SettingsIssue(file: file, pointer: error.instanceLocation, message: error.message,
                          process: Self.processName(at: error.instanceLocation))
        }
        store = StoreSettings(json["store"])
        log = LogSettings(json["log"])
        trustModuleFiles = json["trust_module_files"]?.boolValue ?? false
        // The outputs are parsed now exactly as the running agent parses them (URL, headers,
        // ${env:} references, bounds), so that validation refuses what `console` would.
        if let outputs = json["outputs"], !hostIssues.contains(where: { $0.pointer == "/outputs" || $0.pointer.hasPrefix("/outputs/") }) {
            do throws(OutputConfigurationError) {
                let configurations = try OutputConfiguration.list(json: outputs)
                hostIssues += Self.outputFilesThatAreFolders(configurations, agentDirectory: agentDirectory, file: file)
            } catch {
                hostIssues.append(SettingsIssue(file: file, pointer: "/outputs" + error.pointer.description, message: error.message))
            }
        }
        if !hostIssues.contains(where: { $0.pointer == "/http" || $0.pointer.hasPrefix("/http/") }) {
            do throws(SettingsIssueList) {
                http = try HTTPSettings(json["http"], agentDirectory: agentDirectory)
            } catch {
                hostIssues += error.issues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
            }
        }
        if !hostIssues.contains(where: { $0.pointer == "/fleet" || $0.pointer.hasPrefix("/fleet/") }) {
            do throws(SettingsIssueList) {
                fleet = try FleetSettings(json["fleet"])
            } catch {
                hostIssues += error.issues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
            }
        }
        if !hostIssues.contains(where: { $0.pointer == "/events" || $0.pointer.hasPrefix("/events/") }) {
            let (events, issues) = EventSettings.read(json["events"])
            self.events = events
            hostIssues += issues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
        }
        if !hostIssues.contains(where: { $0.pointer == "/tasks" }) {
            let (tasks, issues) = TaskSettings.read(json["tasks"], environment: ProcessInfo.processInfo.environment)
            // An entry the schema refused is left out by the reader; what it found besides is added.
            let refused = Set(hostIssues.compactMap { Self.taskName(at: $0.pointer) })
            self.tasks = tasks.filter { !refused.contains($0.name) }
            hostIssues += issues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
        }
        if !hostIssues.contains(where: { $0.pointer == "/schedules" }) {
            let (schedules, issues) = ScheduleSettings.read(json["schedules"])
            let refused = Set(hostIssues.compactMap { Self.name(at: $0.pointer, in: "schedules") })
            self.schedules = schedules.filter { !refused.contains($0.name) }
            hostIssues += issues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
        }
        if !hostIssues.contains(where: { $0.pointer == "/workflows" }) {
            let (workflows, drafts, issues) = WorkflowSettings.read(json["workflows"], chatAdapters: Self.chatAdapters(json), approvers: Self.approvers(json["http"]),
                                                                       limits: WorkflowLimits(json["workflow_limits"]))
            let refused = Set(hostIssues.compactMap { Self.name(at: $0.pointer, in: "workflows") })
            self.workflows = workflows.filter { !refused.contains($0.name) }
            workflowDrafts = drafts
            let schemaPointers = Set(hostIssues.map(\.pointer))
            hostIssues += issues.filter { !schemaPointers.contains($0.pointer) }.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
        }
        hostIssues += TriggerCycles.issues(tasks: tasks, workflows: workflows, document: json).map {
            SettingsIssue(file: file, pointer: $0.pointer, message: $0.message)
        }
        // Task notifications: what their schemas cannot see (URL schemes, `to`, passwords not
        // from ${env:}, templates, output names), each at its key; schema errors come first.
        let schemaIssues = hostIssues
        let notificationIssues = TaskNotifier.settingsIssues(json, agentDirectory: agentDirectory)
            .filter { issue in !schemaIssues.contains { !$0.pointer.isEmpty && (issue.pointer == $0.pointer || issue.pointer.hasPrefix($0.pointer + "/")) } }
        hostIssues += notificationIssues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
        enabledModules = []
        for (index, item) in (json["enabled_modules"]?.arrayValue ?? []).enumerated() {
            guard let name = item.stringValue, !name.isEmpty, !enabledModules.contains(name) else { continue }
            // An entry with '/' or ending in .so is a path to a library; anything else is a name.
            if !ModuleLocator.isPath(name), let problem = PlainName.problem(name, what: "module name") {
                hostIssues.append(SettingsIssue(file: file, pointer: "/enabled_modules/\(index)",
                                                message: problem + "; a library elsewhere is enabled by its path (e.g. \"lib/libname.so\")"))
                continue
            }
            if name == BuiltinModules.chatLocation.name {
                // The runtime's own (the chatbot): always there; a module of the agent's by
                // that name would be mixed with it.
                hostIssues.append(SettingsIssue(file: file, pointer: "/enabled_modules/\(index)",
                                                message: "\"\(name)\" is the runtime's built-in module (the chatbot process type), always there: "
                                                    + "remove it from enabled_modules, and give a module of your own another name"))
                continue
            }
            enabledModules.append(name)
        }
        processes = []
        for (name, value) in json["processes"]?.objectValue ?? [:] {
            let pointer = "/processes/" + JSONPointer.escape(name)
            if let problem = ProcessSettings.nameProblem(name) {
                hostIssues.append(SettingsIssue(file: file, pointer: pointer, message: problem, process: name))
            }
            if let process = ProcessSettings(name: name, json: value, pointer: pointer) { processes.append(process) }
        }
    }

    /// `trades` for `/processes/trades/...`.
    /// A file output whose path is an existing folder: the running agent could not open it, so
    /// validation says so too (nothing is created to find out; other failures to open show at
    /// start).
    static func outputFilesThatAreFolders(_ outputs: [OutputConfiguration], agentDirectory: String, file: String) -> [SettingsIssue] {
        outputs.enumerated().compactMap { index, output in
            guard case .file(let settings) = output.destination else { return nil }
            let path = settings.path.hasPrefix("/") ? settings.path : (agentDirectory as NSString).appendingPathComponent(settings.path)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
            return SettingsIssue(file: file, pointer: "/outputs/\(index)/path",
                                 message: "expected a file to append to, found the folder \(path); name a file in it (e.g. \"\(settings.path.hasSuffix("/") ? settings.path : settings.path + "/")outputs.jsonl\")")
        }
    }

    /// The logic adapters of the chatbot process (nil: none): names as the chatbot calls them.
    static func chatAdapters(_ json: JSONValue) -> [String]? {
        guard let bot = (json["processes"]?.objectValue ?? [:]).first(where: { $0.value["type"]?.stringValue == "chatbot" })?.value else { return nil }
        return (bot["logic_adapters"]?.arrayValue ?? []).compactMap { item in
            if let name = item.stringValue { return name }
            return item["name"]?.stringValue ?? item["type"]?.stringValue
        }
    }

    /// Who may answer approvals: the HTTP users, named tokens and the roles (nil: no HTTP front).
    static func approvers(_ http: JSONValue?) -> Set<String>? {
        guard let http, http.objectValue != nil else { return nil }
        var names: Set<String> = ["read", "admin"]
        names.formUnion((http["users"]?.objectValue ?? [:]).keys)
        for token in http["tokens"]?.arrayValue ?? [] { if let name = token["name"]?.stringValue { names.insert(name) } }
        return names
    }

    /// `backup` for `/tasks/backup/...`.
    static func taskName(at pointer: String) -> String? {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false)
        guard tokens.count >= 3, tokens[1] == "tasks" else { return nil }
        return JSONPointer.unescape(String(tokens[2]))
    }

    /// `nightly` for `/schedules/nightly/...` (section "schedules").
    static func name(at pointer: String, in section: String) -> String? {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false)
        guard tokens.count >= 3, tokens[1] == section else { return nil }
        return JSONPointer.unescape(String(tokens[2]))
    }

    static func processName(at pointer: String) -> String? {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false)
        guard tokens.count >= 3, tokens[1] == "processes" else { return nil }
        return JSONPointer.unescape(String(tokens[2]))
    }

    /// The processes that are enabled.
    public var enabledProcesses: [ProcessSettings] { processes.filter(\.enabled) }

    /// Throws every host-level problem, if any.
    public func checkHostLayer() throws(SettingsError) {
        if !hostIssues.isEmpty { throw SettingsError(hostIssues) }
    }
}
