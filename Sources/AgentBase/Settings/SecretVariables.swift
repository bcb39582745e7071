import Foundation
import JSONSchema

/// The environment variables that hold the agent's own secrets, which its children (workers,
/// describe workers, the fork server, commands) do not get: every variable the settings file
/// names as `${env:NAME}` anywhere (HTTP tokens, the fleet's database password, notification
/// credentials, processes' settings, tasks' `env` values), and the names the agent's own
/// documentation and messages give for its secrets (``conventional``). A command whose task's
/// `env` sets one of them (`"env": {"PGPASSWORD": "${env:PGPASSWORD}"}`) gets it.
///
/// The names are those of the settings the agent starts with: the HTTP front and the fleet,
/// whose secrets these are, take their settings at start.
public enum SecretVariables {
    /// The names the runtime proposes for its secrets (`"tokens": ["${env:AGENT_API_TOKEN}"]`,
    /// `"password": "${env:PGPASSWORD}"`, `"${env:SMTP_PASSWORD}"`), withheld even when the
    /// settings do not name them.
    public static let conventional: Set<String> = ["AGENT_API_TOKEN", "PGPASSWORD", "SMTP_PASSWORD"]

    /// ``conventional`` and every `${env:NAME}` in `document`.
    public static func names(in document: JSONValue) -> Set<String> {
        var names = conventional
        collect(document, into: &names)
        return names
    }

    /// ``names(in:)`` of the settings file at `path` (``conventional`` alone when it cannot be
    /// read or parsed: then the agent does not start anyway).
    public static func names(inSettingsFile path: String) -> Set<String> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let document = try? JSONValue.parse(text) else { return conventional }
        return names(in: document)
    }

    /// `environment` without the variables `names`.
    public static func withholding(_ names: Set<String>, from environment: [String: String]) -> [String: String] {
        environment.filter { !names.contains($0.key) }
    }

    private static func collect(_ value: JSONValue, into names: inout Set<String>) {
        switch value {
        case .string(let text):
            if text.contains("${env:") { names.formUnion(EnvironmentSecrets.referencedNames(text)) }
        case .array(let items):
            for item in items { collect(item, into: &names) }
        case .object(let object):
            for item in object.values { collect(item, into: &names) }
        default:
            break
        }
    }
}
