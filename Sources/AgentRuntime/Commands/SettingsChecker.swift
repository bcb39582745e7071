import AgentBase
import AgentCore
import JSONSchema
import Logging

/// The one check of a settings document for a running agent: what `reload` runs on the file,
/// and the settings commands on a document before it is written. The same as
/// `validate-settings` (both layers, every enabled module described; modules are not built),
/// plus the notes on what a reload cannot apply.
struct SettingsChecker: Sendable {
    /// The agent's options (modules are never built by a check).
    let options: AgentLauncher.Options
    let logger: Logger
    /// The document the agent started with: outputs and the store are opened once.
    let startedDocument: JSONValue

    init(options: AgentLauncher.Options, logger: Logger, startedDocument: JSONValue) {
        var options = options
        options.build = false
        self.options = options
        self.logger = logger
        self.startedDocument = startedDocument
    }

    /// What a running agent keeps of each part that a reload does not change.
    private static let keeps = [
        "outputs": "the outputs it started with",
        "store": "the store it started with",
        "http": "the HTTP server it started with (its users, tokens and roles follow the new settings at once, and so does who may answer workflow approvals)",
        "fleet": "the fleet settings it started with (or none): its database, agent id, leases and published event types",
    ]

    /// What of part `key` of a settings document a reload cannot apply: all of it but the HTTP
    /// tokens and users, which a reload puts in force (``HTTPCredentials``).
    static func restartPart(_ key: String, of document: JSONValue) -> JSONValue? {
        guard key == "http", case .object(var http)? = document[key] else { return document[key] }
        http["tokens"] = nil
        http["users"] = nil
        return .object(http)
    }

    /// Checks `settings` (nil: the file as it is on disk now).
    func check(_ settings: AgentSettings?) -> Result<AgentLauncher.Prepared, ControlError> {
        let launcher = AgentLauncher(options: options)
        var prepared: AgentLauncher.Prepared
        do {
            prepared = try settings.map { settings throws(AgentLauncher.PreparationError) in try launcher.prepare(settings, logger: logger) }
                ?? launcher.prepare(logger: logger)
        } catch {
            return .failure(ControlError("\(error)"))
        }
        // Outputs, the store, the HTTP server and the fleet's connection are opened once, at the
        // start: a reload that changed them said "reloaded" and went on with the old ones without a word.
        prepared.report.reloadNotes = ["outputs", "store", "http", "fleet"].filter { Self.restartPart($0, of: startedDocument) != Self.restartPart($0, of: prepared.settings.document) }.map {
            "/\($0) changed: it takes effect at the next start (`agent-control restart`); the running agent keeps \(Self.keeps[$0] ?? $0)"
        }
        return .success(prepared)
    }
}
