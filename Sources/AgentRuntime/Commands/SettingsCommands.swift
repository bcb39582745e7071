import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema

/// The configuration commands of a running agent: `settings_get`, `settings_change`,
/// `validate` and `modules`. Documents are checked with the agent's own ``SettingsChecker``
/// on a thread of their own (``SettingsCheckThread``: describing a module may take seconds,
/// which the loop must not wait for), one at a time; the file is written only through
/// ``SettingsFile``, on the supervisor's loop, and a change is applied there by the
/// supervisor's reload of the report checked here.
///
/// The settings are shown as the file has them: `${env:NAME}` references stay references, and
/// no value from the environment is in any answer (messages about one name its reference).
final class SettingsCommands: Sendable {
    let file: SettingsFile
    let checker: SettingsChecker
    private let thread = SettingsCheckThread()

    init(file: SettingsFile, checker: SettingsChecker) {
        self.file = file
        self.checker = checker
    }

    /// The file's name in messages and reports, as the agent was started with it (as
    /// `validate-settings` and `reload` say it).
    var shownPath: String { checker.options.settingsPath }

    /// Answers `validate` or `modules` (`work`) on the checks' thread; `respond` is called on
    /// the supervisor's loop.
    @LoopActor
    func check<Answer: Sendable>(_ work: @escaping @Sendable (SettingsCommands) -> Result<Answer, CommandError>, inbox: LoopInbox,
                                 respond: @escaping (Result<Answer, CommandError>) -> Void) {
        let reply = LoopOwned(respond)
        let refused = thread.submit { [self] in
            let answer = work(self)
            inbox.post { reply.value(answer) }
        }
        if let refused { respond(.failure(Self.cannotCheck(refused))) }
    }

    /// The answer when the checks' thread cannot be started.
    static func cannotCheck(_ refusal: SystemThread.Refusal) -> CommandError {
        CommandError(.unavailable, "cannot check the settings now: \(refusal)", retryAfter: 5)
    }

    /// Answers `settings_change`: called on the supervisor's loop, and `respond` is called
    /// there. The change is checked on the checks' thread and applied by the supervisor's
    /// reload (and audited by the command layer with ``audited(_:)`` and ``outcome(_:)``).
    @LoopActor
    func change(_ request: SettingsChangeCommand.Request, supervisor: Supervisor,
                respond: @escaping (Result<SettingsChangeCommand.Answer, CommandError>) -> Void) {
        if supervisor.stopping { return respond(.failure(SettingsCommandError(.unavailable, "the agent is stopping").refusal)) }
        let inbox = supervisor.inbox
        let reply = LoopOwned(respond)
        let refused = thread.submit { [self, weak supervisor] in
            let summary = Self.audited(request).what
            let prepared: PreparedChange
            do throws(SettingsCommandError) {
                prepared = try prepareChange(request)
            } catch {
                let refused = Result<SettingsChangeCommand.Answer, CommandError>.failure(error.refusal)
                checker.logger.notice("\(summary): \(Self.outcome(refused))")
                return inbox.post { reply.value(refused) }
            }
            // The next check waits until this change is written and applied, so that it
            // starts from the file this one wrote.
            let applied = DispatchSemaphore(value: 0)
            inbox.post { [self] in
                let answer: Result<SettingsChangeCommand.Answer, CommandError>
                do throws(SettingsCommandError) {
                    guard let supervisor else { throw SettingsCommandError(.unavailable, "the agent is stopping") }
                    answer = .success(try commit(prepared, supervisor: supervisor))
                } catch {
                    answer = .failure(error.refusal)
                }
                checker.logger.notice("\(summary): \(Self.outcome(answer))")
                reply.value(answer)
                applied.signal()
            }
            _ = applied.wait(timeout: .now() + 300)
        }
        if let refused { respond(.failure(Self.cannotCheck(refused))) }
    }

    /// `reload` (and SIGHUP): the file on disk is checked on the checks' thread — describing a
    /// module may take its describe worker seconds — and `apply` gets the result on the loop.
    @LoopActor
    func reload(inbox: LoopInbox, apply: @escaping (Result<AgentLauncher.Prepared, ControlError>) -> Void) {
        let applying = LoopOwned(apply)
        let refused = thread.submit { [self] in
            let checked = checker.check(nil)
            inbox.post { applying.value(checked) }
        }
        if let refused { apply(.failure(ControlError(Self.cannotCheck(refused).message))) }
    }

    /// What a `settings_change` request asks, for the run history, and the process it is
    /// about (empty when it is about modules, several processes or the whole document).
    static func audited(_ request: JSONValue) -> (what: String, process: String) {
        guard let typed = try? JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: request) else {
            return ("settings_change (not understood)", "")
        }
        return audited(typed)
    }

    static func audited(_ request: SettingsChangeCommand.Request) -> (what: String, process: String) {
        let changes = request.changes
        let processes = Set(changes.filter { [.addProcess, .removeProcess, .enableProcess, .disableProcess, .setProcess].contains($0.action) }.map(\.name))
        let process = processes.count == 1 && changes.allSatisfy({ processes.contains($0.name) }) ? processes.first! : ""
        return ("settings_change " + changes.map(\.summary).joined(separator: "; "), process)
    }

    /// What a change did, in a few words, for the log.
    static func outcome(_ result: Result<SettingsChangeCommand.Answer, CommandError>) -> String {
        switch result {
        case .success(let answer): outcome((try? JSONValueEncoder().encode(answer)) ?? ["ok": true])
        case .failure(let refusal): outcome(refusal.json)
        }
    }

    /// What a change did, in a few words, for the run history (from the answer every front
    /// gets) and the log.
    static func outcome(_ answer: JSONValue) -> String {
        guard answer["ok"] == true else {
            let count = answer["errors"]?.arrayValue?.count ?? 0
            return "refused (\(answer["code"]?.stringValue ?? "error")\(count > 1 ? ", \(count) errors" : "")): \(answer["error"]?.stringValue ?? "")"
        }
        guard answer["changed"] == true else { return "no change" }
        func names(_ key: String) -> String {
            let list = answer[key]?.arrayValue?.compactMap(\.stringValue) ?? []
            return list.isEmpty ? "-" : list.joined(separator: ", ")
        }
        return "written (hash \(answer["hash"]?.stringValue ?? "?")) and reloaded; restarted: \(names("restarted")); started: \(names("started")); stopped: \(names("stopped"))"
    }

    // MARK: settings_get

    /// `{"ok", "path", "hash", "text", "settings"}`: the file's text as it is, its parsed
    /// document (null, with `parse_error`, when it is not JSON) and the hash to send back as
    /// `if_match` with a change.
    func get() -> Result<SettingsGetCommand.Answer, CommandError> {
        let contents: SettingsFile.Contents
        do {
            contents = try file.read()
        } catch {
            return .failure(error.refusal)
        }
        var answer = SettingsGetCommand.Answer(path: file.path, hash: contents.hash, text: String(decoding: contents.bytes, as: UTF8.self), settings: .null)
        do {
            answer.settings = try JSONValue.parse(contents.bytes)
        } catch {
            answer.parseError = "not valid JSON at line \(error.line), column \(error.column): \(error.message)"
        }
        return .success(answer)
    }

    // MARK: validate

    /// The report `validate-settings --json` prints, with `"ok": true`, for the file, or for
    /// the document given as `"text"` (a string) or `"settings"` (an object), checked as if it
    /// were the file. Nothing is written or applied.
    func validate(_ request: ValidateCommand.Request) -> Result<ValidateCommand.Answer, CommandError> {
        var settings: AgentSettings?
        if let text = request.text {
            do {
                settings = AgentSettings(json: try JSONValue.parse(text), file: shownPath)
            } catch {
                let message = "not valid JSON at line \(error.line), column \(error.column): \(error.message)"
                return .success(ValidateCommand.Answer(ValidateCommand.Report(file: shownPath, valid: false, errors: [
                    ConfigurationCommands.Issue(file: shownPath, pointer: error.pointer, message: message),
                ])))
            }
        } else if let document = request.settings {
            settings = AgentSettings(json: .object(document), file: shownPath)
        }
        switch checker.check(settings) {
        case .failure(let error):
            // The file itself could not be read or is not JSON: the report validate-settings
            // --json prints then.
            if settings == nil {
                return .success(ValidateCommand.Answer(ValidateCommand.Report(file: shownPath, valid: false,
                                                                              errors: [ConfigurationCommands.Issue(message: error.description)])))
            }
            return .failure(SettingsCommandError(.unavailable, error.description).refusal)
        case .success(let prepared):
            return .success(ValidateCommand.Answer(prepared.report.document))
        }
    }

    // MARK: modules

    /// The modules the settings file enables, each with its process types (kind, description,
    /// subscriptions, settings schema), as describing them found; the runtime's own `chat`
    /// module (the chatbot) last; and the host's schema (the keys every process may have).
    func modules() -> Result<ModulesCommand.Answer, CommandError> {
        let prepared: AgentLauncher.Prepared
        switch checker.check(nil) {
        case .failure(let error): return .failure(SettingsCommandError(.unavailable, error.description).refusal)
        case .success(let result): prepared = result
        }
        var modules = prepared.report.modules.map { module in
            ModulesCommand.Module(name: module.name, file: module.file, available: module.isAvailable, version: module.version,
                                  error: module.error.map { ConfigurationCommands.ModuleError(code: $0.code.rawValue, message: $0.message) },
                                  processTypes: prepared.manifests[module.name]?.processes.map(Self.processType) ?? [])
        }
        let chat = BuiltinModules.chatManifest
        modules.append(ModulesCommand.Module(name: chat.name, file: BuiltinModules.chatLocation.library, available: true, version: chat.version,
                                             builtin: true, processTypes: chat.processes.map(Self.processType)))
        return .success(ModulesCommand.Answer(file: shownPath, modules: modules, hostSchema: HostSchema.document))
    }

    static func processType(_ type: ModuleManifest.ProcessType) -> ModulesCommand.ProcessType {
        ModulesCommand.ProcessType(type: type.type, kind: type.kind, description: type.description, settingsSchema: type.settingsSchema,
                                   subscribes: type.subscribes.isEmpty ? nil : type.subscribes)
    }

    // MARK: settings_change

    /// A change checked and ready to be written: the new text, the hash of the file it was
    /// made from, and the report of its check (or no difference to write).
    struct PreparedChange: Sendable {
        var bytes: [UInt8]
        var baseHash: String
        var report: SettingsReport?
    }

    /// Makes the change a request asks for (its `action`, `name`, `settings`, `text`, or
    /// `"changes": […]` applied together) to the file's text and checks the result as
    /// `validate-settings` does. Refused, with nothing written, when `if_match` is not the
    /// file's hash (`precondition_failed`), a change does not fit (`not_found`, `conflict`,
    /// `invalid`), the result is invalid (`invalid`, every error with its pointer) or, for
    /// removals, something still names what goes (`conflict`). Off the loop.
    func prepareChange(_ request: SettingsChangeCommand.Request) throws(SettingsCommandError) -> PreparedChange {
        let changes = request.changes
        let ifMatch = request.ifMatch
        let current = try file.read()
        if let ifMatch, ifMatch != current.hash {
            throw SettingsCommandError(.preconditionFailed, "\(shownPath) changed since it was read (if_match \(ifMatch), now \(current.hash)); read it again and redo the change")
        }
        var bytes = current.bytes
        for change in changes { bytes = try change.apply(to: bytes, file: shownPath) }
        guard bytes.count <= AgentSettings.maximumFileBytes else {
            throw SettingsCommandError(.invalid, "the settings would be \(bytes.count) bytes; at most \(AgentSettings.maximumFileBytes >> 20) MiB are read")
        }
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            let message = "not valid JSON at line \(error.line), column \(error.column): \(error.message)"
            throw SettingsCommandError(.invalid, "\(shownPath): \(message); nothing was written",
                                       errors: [["file": .string(shownPath), "pointer": .string(error.pointer), "message": .string(message)]])
        }
        let replaces = changes.contains { $0.action == .replace }
        if bytes == current.bytes || (!replaces && (try? JSONValue.parse(current.bytes)) == document) {
            return PreparedChange(bytes: current.bytes, baseHash: current.hash, report: nil)
        }
        let prepared: AgentLauncher.Prepared
        switch checker.check(AgentSettings(json: document, file: shownPath)) {
        case .failure(let error): throw SettingsCommandError(.unavailable, "cannot check the settings: \(error); nothing was written")
        case .success(let result): prepared = result
        }
        guard prepared.report.isValid else {
            let issues = prepared.report.blockingIssues
            let errors = prepared.report.json["errors"]?.arrayValue ?? []
            if let referenced = Self.referenced(changes, errors: errors, document: document) { throw referenced }
            throw SettingsCommandError(.invalid, "the change would make the settings invalid (\(issues.count) error\(issues.count == 1 ? "" : "s"); the first: \(issues.first.map(\.description) ?? "?")); nothing was written",
                                       errors: errors)
        }
        return PreparedChange(bytes: bytes, baseHash: current.hash, report: prepared.report)
    }

    /// Writes a checked change and has the supervisor apply it.
    @LoopActor
    func commit(_ change: PreparedChange, supervisor: Supervisor) throws(SettingsCommandError) -> SettingsChangeCommand.Answer {
        guard let report = change.report else {
            return SettingsChangeCommand.Answer(path: file.path, hash: change.baseHash,
                                                unchanged: "the settings already say so: nothing was written, nothing reloaded")
        }
        guard !supervisor.stopping else { throw SettingsCommandError(.unavailable, "the agent is stopping; nothing was written") }
        // Checking may have taken a while (a module described): an edit by hand meanwhile wins.
        let (current, identity) = try file.readWithIdentity()
        guard current.hash == change.baseHash else { throw SettingsFile.conflict(shownPath) }
        try file.write(change.bytes, replacing: identity)
        let hash = SettingsFile.hash(change.bytes)
        switch supervisor.applyReload(report) {
        case .success(let applied):
            return SettingsChangeCommand.Answer(path: file.path, hash: hash, applied: applied)
        case .failure(let refusal):
            let reason = refusal.errors.map { JSONValue.array($0).serialized() } ?? refusal.message
            throw SettingsCommandError(.unavailable, "\(shownPath) was written (hash \(hash)) but not applied: \(reason); run `agent-control reload` once the agent can")
        }
    }
}
