import AgentBase
import AgentCommands
import AgentSupervision
import AgentWork
import Foundation
import AgentCore
import JSONSchema

/// The second layer of settings validation: every process against the JSON Schema its type
/// declares, after the host schema (``HostSchema``). Schemas are compiled once per type.
public struct SettingsValidator {
    private var compiled: [String: Result<JSONSchemaValidator, JSONSchemaCompileError>] = [:]

    public init() {}

    /// Checks every process (enabled or not) and plans the enabled, valid ones.
    public mutating func check(
        _ settings: AgentSettings, modules: [ModuleLocation], manifests: [String: ModuleManifest],
        moduleErrors: [ModuleLoadError] = []
    ) -> SettingsReport {
        let file = settings.file
        let queryChecks = PlannedQuery.SQLChecks()
        // The runtime's own process types come first in nothing but name: they are always there.
        var manifests = manifests
        manifests[BuiltinModules.chatLocation.name] = BuiltinModules.chatManifest
        let modules = modules + [BuiltinModules.chatLocation]
        let failedModules = Set(moduleErrors.map(\.module))
        var moduleReports = modules.filter { $0 != BuiltinModules.chatLocation }.map { location in
            SettingsReport.Module(
                name: location.name, file: location.library, version: manifests[location.name]?.version,
                processTypes: manifests[location.name]?.processes.map(\.type) ?? [],
                error: moduleErrors.first { $0.module == location.name })
        } + moduleErrors.filter { error in !modules.contains { $0.name == error.module } }.map {
            SettingsReport.Module(name: $0.module, file: $0.file, version: nil, processTypes: [], error: $0)
        }
        let allTypes = modules.flatMap { manifests[$0.name]?.processes.map(\.type) ?? [] }
        var generalIssues = settings.hostIssues.filter { $0.process == nil }
        var reports: [SettingsReport.Process] = []
        var planned: [PlannedProcess] = []

        // Types no loaded module provides, where a module that failed to load may explain them.
        var unexplainedTypes: [(type: String, process: String)] = []
        var unexplainedAdapters: [(adapter: String, process: String)] = []
        let environment = ProcessInfo.processInfo.environment
        let definedTaskNames = Set((settings.document["tasks"]?.objectValue ?? [:]).keys)
        let httpUsers = (settings.http?.users ?? [:]).mapValues(\.role)
        var executors: [ExecutorDefinition] = []
        for original in settings.processes {
            var process = original
            var issues = settings.hostIssues.filter { $0.process == process.name }
            var environmentProblems: [(pointer: String, message: String)] = []
            var secrets = EnvironmentSecrets()
            process.moduleSettings = Self.resolvingEnvironment(.object(process.moduleSettings), base: process.pointer, environment: environment,
                                                               problems: &environmentProblems, secrets: &secrets).objectValue ?? process.moduleSettings
            for problem in environmentProblems {
                issues.append(SettingsIssue(file: file, pointer: process.pointer + problem.pointer, message: problem.message, process: process.name))
            }
            func issue(_ pointer: String, _ message: String) {
                issues.append(SettingsIssue(file: file, pointer: process.pointer + pointer, message: message, process: process.name))
            }
            // The host type "executor": a capacity runs are assigned to, no module's process.
            if process.type == ExecutorSettings.type, process.module == nil {
                let (found, problems) = ExecutorSettings.read(process, tasks: definedTaskNames, users: httpUsers)
                issues += problems.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message, process: process.name) }
                issues = issues.map(secrets.redact)
                reports.append(SettingsReport.Process(name: process.name, type: process.type, module: nil, kind: ExecutorSettings.type,
                                                      enabled: process.enabled, issues: issues))
                if process.enabled, issues.isEmpty { executors += found }
                continue
            }
            var resolved: (ModuleLocation, ModuleManifest.ProcessType)?
            if !process.type.isEmpty {
                let providers = modules.filter { manifests[$0.name]?.processType(process.type) != nil }
                if let wanted = process.module {
                    if let module = providers.first(where: { $0.name == wanted }) {
                        resolved = (module, manifests[module.name]!.processType(process.type)!)
                    } else {
                        issue("/module", "module \"\(wanted)\" is not enabled or does not provide process type \"\(process.type)\"")
                    }
                } else if providers.count > 1 {
                    issue("/type", "process type \"\(process.type)\" is provided by several modules (\(providers.map(\.name).joined(separator: ", "))); add \"module\": \"<name>\" to choose one")
                } else if let module = providers.first {
                    resolved = (module, manifests[module.name]!.processType(process.type)!)
                } else {
                    let searched = modules.filter { manifests[$0.name] != nil }.map { module in
                        "\(module.name) (\(manifests[module.name]!.processes.map(\.type).joined(separator: ", ")))"
                    }
                    let hint = Suggestions.hint(for: process.type, in: allTypes)
                    if !failedModules.isEmpty, hint.isEmpty {
                        // Most likely a consequence of the module that did not load: one error
                        // (the module's) says so, this one only points at it.
                        let names = failedModules.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
                        issues.append(SettingsIssue(
                            file: file, pointer: process.pointer + "/type",
                            message: "unknown process type \"\(process.type)\"; it may come from module \(names), which could not be loaded (see /enabled_modules)",
                            process: process.name, followsFrom: "/enabled_modules"))
                        unexplainedTypes.append((process.type, process.name))
                    } else {
                        var message = "unknown process type \"\(process.type)\"\(hint)"
                        message += searched.isEmpty ? "; no enabled module was loaded" : "; the enabled modules provide: \(searched.joined(separator: "; "))"
                        if !failedModules.isEmpty {
                            message += "; \(failedModules.sorted().joined(separator: ", ")) could not be loaded and may provide it"
                        }
                        issue("/type", message)
                    }
                }
            }
            if let (_, type) = resolved, type.kind == "logic_adapter" {
                issue("/type", "\"\(process.type)\" is a logic adapter: it answers chat messages for a chatbot process and does not run on its own")
                resolved = nil
            }
            if let (_, type) = resolved, type.kind == "task" {
                issue("/type", "\"\(process.type)\" is a task type: its runs start on request and end; define it under \"tasks\" (e.g. \"tasks\": {\"\(process.name)\": {\"type\": \"<module>.\(type.type)\"}}), not as a process")
                resolved = nil
            }
            if let (module, type) = resolved {
                if process.subscribe != nil, type.kind == "datasource" {
                    issue("/subscribe", "\"\(process.type)\" is a datasource; only monitors and logic adapters receive events")
                }
                for (index, subscription) in (process.subscribe ?? []).enumerated() where subscription.hasPrefix(FleetSettings.subscriptionPrefix) {
                    let published = subscription.dropFirst(FleetSettings.subscriptionPrefix.count)
                    if published.isEmpty {
                        issue("/subscribe/\(index)", "expected an event type after \"fleet:\" (e.g. \"fleet:frequency_alert\"); found none")
                    } else if settings.fleet == nil, !settings.hostIssues.contains(where: { $0.pointer.hasPrefix("/fleet") }) {
                        issue("/subscribe/\(index)", "\"\(subscription)\" is an event type published by the agents of a fleet, but these settings have no \"fleet\": add \"fleet\" (see docs/fleet.md) or subscribe to the local type \"\(published)\"")
                    }
                }
                if process.replicas != nil, type.kind == "chatbot" {
                    issue("/replicas", "\"\(process.type)\" is the chatbot: one worker answers the chat, with one conversation history; remove \"replicas\"")
                }
                issues += validateModuleSettings(process, module: module, type: type, file: file)
                if type.kind == "chatbot", issues.isEmpty {
                    for problem in LanguageModelAdapterSettings.problems(original.moduleSettings) { issue(problem.pointer, problem.message) }
                    if let schema = process.moduleSettings["preferences_schema"], let problem = WorkflowSettings.compileProblem(schema) {
                        issue("/preferences_schema", "the schema does not compile: \(problem)")
                    }
                    for problem in BuiltinModules.checkAdapters(process.moduleSettings, modules: modules, manifests: manifests) {
                        // "sample.x" while module "sampel" did not load: a consequence of that.
                        if let adapter = Self.adapterName(at: problem.pointer, in: process.moduleSettings),
                           let failed = Self.failedModule(explaining: adapter, failed: failedModules, manifests: manifests) {
                            issues.append(SettingsIssue(
                                file: file, pointer: process.pointer + problem.pointer,
                                message: "unknown logic adapter \"\(adapter)\"; it may come from module \"\(failed)\", which could not be loaded (see /enabled_modules)",
                                process: process.name, followsFrom: "/enabled_modules"))
                            unexplainedAdapters.append((adapter, process.name))
                            continue
                        }
                        issue(problem.pointer, problem.message)
                    }
                }
            }
            var queries: [PlannedQuery] = []
            if issues.isEmpty, let (_, type) = resolved {
                let settings = SchemaDefaults.apply(type.settingsSchema, to: .object(process.moduleSettings)).objectValue ?? process.moduleSettings
                for declaration in type.queries {
                    switch PlannedQuery.plan(declaration, process: process.name, settings: settings, checks: queryChecks) {
                    case .success(let query): queries.append(query)
                    case .failure(let problem):
                        issue(problem.setting.map { "/" + JSONPointer.escape($0) } ?? "", "the periodic query \"\(declaration.name)\" of \"\(type.type)\" cannot run: \(problem)")
                    }
                }
            }
            issues = issues.map(secrets.redact)
            reports.append(SettingsReport.Process(
                name: process.name, type: process.type, module: resolved?.0.name, kind: resolved?.1.kind,
                enabled: process.enabled, issues: issues))
            if process.enabled, issues.isEmpty, let (module, type) = resolved {
                let settings = SchemaDefaults.apply(type.settingsSchema, to: .object(process.moduleSettings)).objectValue ?? process.moduleSettings
                var plan = PlannedProcess(
                    name: process.name, type: process.type, kind: type.kind, module: module, settings: settings,
                    subscriptions: process.subscribe ?? type.subscribes, policy: process.policy, queries: queries)
                if type.kind == "chatbot" {
                    plan.adapterLibraries = Dictionary(modules.filter { $0.library != BuiltinModules.chatLocation.library }.map { ($0.name, $0.library) },
                                                       uniquingKeysWith: { first, _ in first })
                    for subscription in BuiltinModules.programAdapterSubscriptions(settings, manifests: manifests) where !plan.subscriptions.contains(subscription) {
                        plan.subscriptions.append(subscription)
                    }
                    plan.settings = BuiltinModules.withProgramAdapterDefaults(settings, manifests: manifests)
                }
                planned += Self.replicas(of: plan, count: process.replicas)
            }
        }
        var note = ""
        if !unexplainedTypes.isEmpty {
            var types: [String] = []
            for entry in unexplainedTypes where !types.contains(entry.type) { types.append(entry.type) }
            note += "; the process type\(types.count == 1 ? "" : "s") \(types.map { "\"\($0)\"" }.joined(separator: ", ")) (of \(unexplainedTypes.map(\.process).joined(separator: ", "))) \(types.count == 1 ? "is" : "are") provided by no loaded module and may come from it"
        }
        if !unexplainedAdapters.isEmpty {
            var adapters: [String] = []
            for entry in unexplainedAdapters where !adapters.contains(entry.adapter) { adapters.append(entry.adapter) }
            note += "; the logic adapter\(adapters.count == 1 ? "" : "s") \(adapters.map { "\"\($0)\"" }.joined(separator: ", ")) (of \(unexplainedAdapters.map(\.process).joined(separator: ", "))) may come from it too"
        }
        if !note.isEmpty {
            for index in moduleReports.indices where moduleReports[index].error != nil {
                moduleReports[index].error!.message += note
            }
        }
        var tasks: [TaskDefinition] = []
        var moduleTasks: [String: ModuleTaskType] = [:]
        for var task in settings.tasks {
            let problems = checkTaskType(task, modules: modules, manifests: manifests, failedModules: failedModules)
            generalIssues += problems.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message, followsFrom: $0.followsFrom) }
            guard problems.isEmpty else { continue }
            if let resolved = Self.moduleTaskType(task.type, modules: modules, manifests: manifests) {
                moduleTasks[task.type] = ModuleTaskType(module: resolved.module, type: resolved.type.type, heartbeatTimeout: resolved.type.heartbeatTimeout)
                // Requests are checked against the handler's own input schema.
                if task.inputSchema == nil { task.inputSchema = resolved.type.inputSchema }
                if task.outputSchema == nil { task.outputSchema = resolved.type.outputSchema }
            }
            tasks.append(task)
        }
        let definedTasks = Set((settings.document["tasks"]?.objectValue ?? [:]).keys)
        generalIssues += ExecutorSettings.crossCheck(executors, tasks: tasks, definedTasks: definedTasks, assignment: settings.document["assignment"])
            .map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message) }
        let (workflows, workflowIssues) = WorkflowSettings.check(settings.workflows, drafts: settings.workflowDrafts, tasks: tasks, definedTasks: definedTasks)
        generalIssues += workflowIssues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message, followsFrom: $0.followsFrom) }
        // After the workflows: a schedule may start one.
        let definedWorkflows = Set((settings.document["workflows"]?.objectValue ?? [:]).keys)
        let (schedules, scheduleIssues) = ScheduleSettings.check(settings.schedules, tasks: tasks, definedTasks: definedTasks,
                                                                 workflows: workflows, definedWorkflows: definedWorkflows)
        generalIssues += scheduleIssues.map { SettingsIssue(file: file, pointer: $0.pointer, message: $0.message, followsFrom: $0.followsFrom) }
        var report = SettingsReport(file: file, modules: moduleReports, processes: reports, generalIssues: generalIssues, planned: planned)
        report.executors = executors
        report.assignment = ExecutorSettings.readAssignment(settings.document["assignment"])
        report.schedules = schedules
        report.workflows = workflows
        report.httpRoles = Self.roles(settings.http)
        report.http = settings.http
        report.tasks = tasks
        report.moduleTasks = moduleTasks
        report.log = settings.log
        report.events = settings.events
        return report
    }

    /// Each HTTP user and named token with its role (a user wins over a token of the same name,
    /// as when the approval is answered from the dashboard).
    static func roles(_ http: HTTPSettings?) -> [String: String] {
        var roles: [String: String] = [:]
        for token in http?.tokens ?? [] { roles[token.name] = token.role }
        for (name, user) in http?.users ?? [:] { roles[name] = user.role }
        return roles
    }

    /// The workers of a planned process: itself without `replicas`, else `count` replicas named
    /// `NAME#1 … NAME#N`, each with its own periodic queries. A replica's plan depends on its
    /// number, not on the count, so that a reload changing the count leaves the others equal.
    static func replicas(of plan: PlannedProcess, count: Int?) -> [PlannedProcess] {
        guard let count else { return [plan] }
        return (1...max(1, count)).map { index in
            var replica = plan
            replica.name = PlannedProcess.replicaName(plan.name, index)
            replica.replicaOf = plan.name
            replica.replica = index
            replica.queries = plan.queries.map { query in
                var query = query
                query.process = replica.name
                return query
            }
            return replica
        }
    }

    /// The adapter a chatbot's `/logic_adapters/N` names (a string, or an object's `type`).
    static func adapterName(at pointer: String, in settings: JSONObject) -> String? {
        guard pointer.hasPrefix("/logic_adapters/"), let index = Int(pointer.dropFirst("/logic_adapters/".count)),
              let list = settings["logic_adapters"]?.arrayValue, list.indices.contains(index) else { return nil }
        return list[index].stringValue ?? list[index]["type"]?.stringValue
    }

    /// The module that failed to load and may explain `<module>.<type>`: the same name, or a
    /// close one (a misspelling in enabled_modules), when no loaded module has that name.
    static func failedModule(explaining adapter: String, failed: Set<String>, manifests: [String: ModuleManifest]) -> String? {
        let parts = adapter.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, manifests[parts[0]] == nil else { return nil }
        return failed.sorted().first { $0 == parts[0] || Suggestions.closest(to: $0, among: [parts[0]]) != nil }
    }

    mutating func validateModuleSettings(
        _ process: ProcessSettings, module: ModuleLocation, type: ModuleManifest.ProcessType, file: String
    ) -> [SettingsIssue] {
        let key = module.name + "\u{0}" + type.type
        if compiled[key] == nil {
            do {
                compiled[key] = .success(try JSONSchemaValidator(schema: type.settingsSchema))
            } catch {
                compiled[key] = .failure(error)
            }
        }
        switch compiled[key]! {
        case .failure(let error):
            return [SettingsIssue(file: file, pointer: process.pointer + "/type",
                                  message: "the settings schema of \"\(type.type)\" in module \(module.name) is invalid (\(error)); fix the module", process: process.name)]
        case .success(let validator):
            let issues = validator.validate(.object(process.moduleSettings)).map { error in
                SettingsIssue(file: file, pointer: process.pointer + error.instanceLocation,
                              message: Self.withHostKeyHint(error, properties: type.settingsSchema["properties"]?.objectValue?.keys ?? []),
                              process: process.name)
            }
            guard issues.isEmpty else { return issues }
            // The module gets its schema's defaults filled in: a default its own schema refuses
            // reached the module unchecked (a string where it declared an integer).
            let given = JSONValue.object(process.moduleSettings)
            let filled = SchemaDefaults.apply(type.settingsSchema, to: given)
            guard filled != given else { return [] }
            return validator.validate(filled).map { error in
                // A value there that the file did not give is the module's default.
                let isDefault = JSONPointer(error.instanceLocation).map { $0.resolve(in: given) == nil } ?? false
                let message = isDefault
                    ? "the default that module \(module.name) declares for this setting fails its own schema: \(error.message); set it here, or fix the module's schema"
                    : "with the defaults that module \(module.name) declares filled in, the settings fail its own schema: \(error.message); set the settings it fills in here, or fix the module's schema"
                return SettingsIssue(file: file, pointer: process.pointer + error.instanceLocation, message: message, process: process.name)
            }
        }
    }

    /// An unknown property at the top of a process may be a misspelt host-level key: say so.
    static func withHostKeyHint(_ error: ValidationError, properties: [String]) -> String {
        guard error.instanceLocation.isEmpty, error.keyword == "additionalProperties" || error.keyword == "unevaluatedProperties",
              let start = error.message.range(of: "unknown property \""),
              let end = error.message[start.upperBound...].firstIndex(of: "\"")
        else { return error.message }
        let name = String(error.message[start.upperBound..<end])
        if let host = Suggestions.closest(to: name, among: ProcessSettings.hostKeys), !error.message.contains("did you mean") {
            return "unknown property \"\(name)\"; did you mean the host setting \"\(host)\"?"
        }
        if !error.message.contains("did you mean") {
            let allowed = (ProcessSettings.hostKeys + properties).map { "\"\($0)\"" }.joined(separator: ", ")
            return "unknown property \"\(name)\"; allowed: \(allowed)"
        }
        return error.message
    }
}
