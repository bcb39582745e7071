import AgentBase
import Foundation
import JSONSchema

/// The `fleet` section of settings.json: agents on several hosts sharing one PostgreSQL
/// database for their task runs and schedules. Without it, nothing changes: the agent keeps
/// everything in its own SQLite store.
///
/// ```json
/// "fleet": {"postgres": "postgres://agent@db.example:5432/agents?sslmode=require",
///           "password": "${env:PGPASSWORD}", "agent_id": "host-a"}
/// ```
public struct FleetSettings: Sendable, Equatable {
    /// How the connection is protected: `sslmode` of the URL (`disable` by default;
    /// `require`: TLS with the system's trusted certificates, the host name checked).
    public enum TLSMode: String, Sendable, Equatable { case disable, require }

    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    /// Resolved from `${env:NAME}` (never written in the file).
    public var password: String?
    public var tls: TLSMode
    /// This agent's name in the fleet: unique per agent.
    public var agentID: String
    /// Seconds a claimed run (and the schedules' leadership) holds without a renewal: how long
    /// a dead agent's runs wait before another takes them.
    public var lease: Double
    /// Seconds between heartbeats; an agent silent for 3 heartbeats is shown lost.
    public var heartbeat: Double
    /// Seconds between polls of the shared queue when no wakeup came (NOTIFY is a hint only).
    public var poll: Double
    /// Writes waiting for the database when it cannot be reached; beyond this the oldest are
    /// dropped, counted.
    public var backlogLimit: Int
    /// Event types this agent publishes to the fleet (its monitors and those of the other
    /// agents receive them by subscribing to `fleet:TYPE`); other events never leave the agent.
    public var publish: [String]
    /// Seconds a run waits, once due, for the agent its task's assignment strategy chose in the
    /// fleet (it claims at once); after that any agent with room may take it. 0: no choice is
    /// made, whichever agent claims first takes the run.
    public var assignmentHold: Double
    /// Seconds a published event is kept in the database (each agent deletes its own older ones).
    public var eventRetention: Double

    /// A monitor's subscription to a type the fleet publishes: `"subscribe": ["fleet:TYPE"]`.
    public static let subscriptionPrefix = "fleet:"

    /// The URL as shown (no password).
    public var displayURL: String { "postgres://\(user)@\(host):\(port)/\(database)\(tls == .require ? "?sslmode=require" : "")" }

    /// The schema of the `fleet` key (part of the host schema).
    public static let schema: JSONValue = [
        "type": "object",
        "additionalProperties": false,
        "required": ["postgres", "agent_id"],
        "description": "Share task runs, schedules and published event types with other agents through one PostgreSQL database.",
        "properties": [
            "postgres": ["type": "string", "minLength": 1,
                         "description": "postgres://USER@HOST[:PORT]/DATABASE[?sslmode=disable|require]; the password goes in \"password\"."],
            "password": ["type": "string", "description": "Written as ${env:NAME}: never in the file."],
            "agent_id": ["type": "string", "minLength": 1, "maxLength": 128, "description": "This agent's name in the fleet, unique per agent."],
            "lease": ["type": "number", "minimum": 1, "maximum": 3600, "default": 30,
                      "description": "Seconds a claimed run or the schedules' leadership holds without renewal."],
            "heartbeat": ["type": "number", "minimum": SettingsBounds.json(SettingsBounds.shortestPeriod), "maximum": 600, "default": 5,
                          "description": "Seconds between the agent's signs of life in the database; an agent silent for three heartbeats is shown lost."],
            "poll": ["type": "number", "minimum": 0.05, "maximum": 600, "default": 2,
                     "description": "Seconds between polls of the shared queue when no NOTIFY wakeup came."],
            "backlog_limit": ["type": "integer", "minimum": 1, "maximum": 10_000_000, "default": 100_000,
                              "description": "Published events kept in memory while they wait to be written (the database away); beyond it the oldest are dropped and counted."],
            "publish": ["type": "array", "items": ["type": "string", "minLength": 1], "uniqueItems": true, "default": [],
                        "description": "Event types this agent publishes to the fleet; monitors of any agent receive them with \"subscribe\": [\"fleet:TYPE\"]."],
            "assignment_hold": ["type": "number", "minimum": 0, "maximum": 3600, "default": 1,
                                "description": "Seconds a queued run waits for the agent its task's strategy chose before any agent may take it; 0: the first to claim."],
            "event_retention": ["type": "number", "minimum": 60, "maximum": 31_536_000, "default": 604_800,
                                "description": "Seconds a published event is kept in the database."],
        ],
    ]

    /// The settings' `"fleet"`, or nil when absent. Assumes the host schema's checks passed;
    /// throws what it cannot accept, each at its pointer.
    public init?(_ json: JSONValue?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(SettingsIssueList) {
        guard let json, json.objectValue != nil else { return nil }
        var issues: [(pointer: String, message: String)] = []
        let text = json["postgres"]?.stringValue ?? ""
        let parsed = Self.parseURL(text)
        switch parsed {
        case .failure(let message): issues.append(("/fleet/postgres", message))
        case .success: break
        }
        password = nil
        if let value = json["password"]?.stringValue {
            if !EnvironmentReferences.containsReference(value) {
                issues.append(("/fleet/password", "expected a reference to the environment such as \"${env:PGPASSWORD}\" (a password written in the file is readable by whoever reads the settings); found a literal string"))
            } else {
                do throws(EnvironmentReferences.Failure) {
                    password = try EnvironmentReferences.resolve(value, environment: environment)
                } catch {
                    issues.append(("/fleet/password", error.message))
                }
            }
        }
        agentID = json["agent_id"]?.stringValue ?? ""
        if let problem = PlainName.problem(agentID, what: "agent id") { issues.append(("/fleet/agent_id", problem)) }
        lease = json["lease"]?.numberValue?.doubleValue ?? 30
        heartbeat = json["heartbeat"]?.numberValue?.doubleValue ?? 5
        poll = json["poll"]?.numberValue?.doubleValue ?? 2
        backlogLimit = json["backlog_limit"]?.numberValue?.intValue ?? 100_000
        publish = (json["publish"]?.arrayValue ?? []).compactMap(\.stringValue)
        for (index, type) in publish.enumerated() where type.hasPrefix(Self.subscriptionPrefix) {
            issues.append(("/fleet/publish/\(index)", "expected a local event type (what this agent's processes emit); found \"\(type)\", which names the fleet's events: publish \"\(type.dropFirst(Self.subscriptionPrefix.count))\""))
        }
        eventRetention = json["event_retention"]?.numberValue?.doubleValue ?? 604_800
        assignmentHold = json["assignment_hold"]?.numberValue?.doubleValue ?? 1
        guard issues.isEmpty, case .success(let url) = parsed else { throw SettingsIssueList(issues) }
        host = url.host
        port = url.port
        user = url.user
        database = url.database
        tls = url.tls
    }

    package struct ParsedURL {
        package var host: String, port: Int, user: String, database: String, tls: TLSMode
    }

    package enum Parse<T> {
        case success(T)
        case failure(String)
    }

    package static func parseURL(_ text: String) -> Parse<ParsedURL> {
        let example = "(e.g. \"postgres://agent@db.example:5432/agents?sslmode=require\")"
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            return .failure("expected a postgres:// URL \(example); found \(Describe.value(.string(text)))")
        }
        guard let host = components.host, !host.isEmpty else { return .failure("expected a host in the URL \(example); found none") }
        guard let user = components.user, !user.isEmpty else { return .failure("expected a user in the URL (postgres://USER@HOST/DATABASE) \(example); found none") }
        if components.password != nil {
            return .failure("the URL holds a password: put it in \"password\" as ${env:NAME} instead, so that it is not in the file")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { return .failure("expected the database's name as the URL's path (postgres://USER@HOST/DATABASE); found \(Describe.value(.string(components.path)))") }
        var tls = TLSMode.disable
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                switch item.value ?? "" {
                case "disable": tls = .disable
                case "require", "verify-full": tls = .require
                default: return .failure("expected sslmode=disable or sslmode=require; found sslmode=\(item.value ?? "")")
                }
            default:
                return .failure("expected no URL parameter but sslmode; found \"\(item.name)\"")
            }
        }
        return .success(ParsedURL(host: host, port: components.port ?? 5432, user: user, database: database, tls: tls))
    }
}
