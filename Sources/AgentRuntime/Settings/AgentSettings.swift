import Foundation
import JSONSchema

/// An agent's `settings.json`: the modules it enables and the processes it runs.
///
/// ```json
/// {"enabled_modules": ["sample"],
///  "processes": {"trades": {"type": "trade_feed", "enabled": true, "interval": 0.5}}}
/// ```
public struct AgentSettings: Sendable {
    /// The settings file's path, as given.
    public var file: String
    /// The folder of the settings file: the agent's folder.
    public var agentDirectory: String
    /// Modules to load, in order.
    public var enabledModules: [String]
    /// Every configured process, in file order (disabled ones included).
    public var processes: [ProcessSettings]

    /// Top-level keys the host understands.
    public static let topLevelKeys = ["enabled_modules", "processes"]

    /// Reads and checks a settings file; every problem is reported at once.
    public static func load(file: String) throws -> AgentSettings {
        let url = URL(fileURLWithPath: file)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SettingsError([SettingsIssue(file: file, pointer: "", message: "cannot read the settings file: \(Self.reason(error)). Pass --settings PATH or create settings.json in this folder.")])
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            throw SettingsError([SettingsIssue(file: file, pointer: "", message: "not valid JSON: \(error)")])
        }
        return try AgentSettings(json: value, file: file)
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return nsError.localizedDescription
    }

    /// Checks the structure the host needs; module settings are checked later against each
    /// process type's schema.
    public init(json: JSONValue, file: String) throws {
        self.file = file
        agentDirectory = URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
        enabledModules = []
        processes = []
        var issues: [SettingsIssue] = []
        func issue(_ pointer: String, _ message: String, process: String? = nil) {
            issues.append(SettingsIssue(file: file, pointer: pointer, message: message, process: process))
        }

        guard let root = json.objectValue else {
            throw SettingsError([SettingsIssue(file: file, pointer: "", message: "expected an object with \"enabled_modules\" and \"processes\", found \(Describe.value(json))")])
        }
        for key in root.keys where !Self.topLevelKeys.contains(key) {
            issue("/\(JSONPointerToken.escape(key))", "unknown setting \"\(key)\"\(Suggestions.hint(for: key, in: Self.topLevelKeys)) (known: \(Self.topLevelKeys.joined(separator: ", ")))")
        }

        switch root["enabled_modules"] {
        case nil:
            issue("/enabled_modules", "missing; expected an array of module names, e.g. [\"system\", \"sample\"]")
        case .array(let items)?:
            for (index, item) in items.enumerated() {
                if let name = item.stringValue, !name.isEmpty {
                    if enabledModules.contains(name) {
                        issue("/enabled_modules/\(index)", "module \"\(name)\" is enabled twice")
                    } else {
                        enabledModules.append(name)
                    }
                } else {
                    issue("/enabled_modules/\(index)", "expected a module name (string), found \(Describe.value(item))")
                }
            }
        case let other?:
            issue("/enabled_modules", "expected an array of module names, found \(Describe.value(other))")
        }

        switch root["processes"] {
        case nil:
            issue("/processes", "missing; expected an object mapping process names to their settings")
        case .object(let entries)?:
            for (name, value) in entries {
                let pointer = "/processes/\(JSONPointerToken.escape(name))"
                if let problem = ProcessSettings.nameProblem(name) {
                    issue(pointer, problem, process: name)
                }
                do {
                    processes.append(try ProcessSettings(name: name, json: value, pointer: pointer, file: file))
                } catch let error as SettingsError {
                    issues += error.issues
                }
            }
        case let other?:
            issue("/processes", "expected an object mapping process names to their settings, found \(Describe.value(other))")
        }
        if !issues.isEmpty { throw SettingsError(issues) }
    }

    /// The processes that are enabled.
    public var enabledProcesses: [ProcessSettings] { processes.filter(\.enabled) }
}

/// Escaping of JSON-pointer reference tokens (RFC 6901).
public enum JSONPointerToken {
    public static func escape(_ token: String) -> String {
        token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}

/// Short descriptions of JSON values for error messages: `"fast" (string)`, `42 (integer)`.
public enum Describe {
    public static func value(_ value: JSONValue) -> String {
        switch value {
        case .object(let o): return "an object with \(o.count) \(o.count == 1 ? "property" : "properties")"
        case .array(let a): return "an array of \(a.count) \(a.count == 1 ? "item" : "items")"
        case .null: return "null"
        default:
            var text = value.serialized()
            if text.count > 40 { text = String(text.prefix(37)) + "…" }
            return "\(text) (\(value.typeName))"
        }
    }
}
