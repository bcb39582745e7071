import AgentBase
import Foundation
import JSONSchema

/// `"http"`: the HTTP API, dashboard and metrics (off unless present), and who may use them.
///
/// ```json
/// "http": {"listen": "127.0.0.1:8080",
///          "tokens": ["${env:AGENT_API_TOKEN}", {"token": "${env:GRAFANA_TOKEN}", "role": "read", "name": "grafana"}],
///          "users": {"alice": {"password_hash": "$2b$12$…", "role": "admin"}}}
/// ```
public struct HTTPSettings: Sendable, Equatable {
    /// Where to listen.
    public var host: String
    public var port: Int
    /// The largest request body accepted (413 beyond).
    public var maximumBodyBytes = 1 << 20
    /// Bearer tokens for programs.
    public var tokens: [APIToken] = []
    /// Users for people (the dashboard), by name.
    public var users: [String: APIUser] = [:]
    /// Certificate and key: HTTPS instead of HTTP.
    public var tls: TLSFiles?
    /// `"allow_insecure_remote": true`: a non-loopback address without TLS is accepted.
    public var allowInsecureRemote = false
    /// A session ends after this many seconds without a request.
    public var sessionTTL: Double = 28_800
    /// Failed logins allowed per client address and per user name within ``loginWindow``.
    public var loginFailures = 5
    /// The window of ``loginFailures``, in seconds.
    public var loginWindow: Double = 900

    /// The roles of tokens and users.
    public static let roles: JSONValue = ["type": "string", "enum": ["read", "admin"], "default": "admin",
                                          "description": "\"read\": GET and HEAD only; \"admin\": everything."]
    /// Seconds a connection may stay silent (no request, or a request only half sent) before
    /// it is closed: a slow or stalled client cannot hold a connection for longer.
    public var idleTimeout: Double = 30
    /// Connections served at once; further ones wait in the listen backlog until one closes.
    public var maximumConnections = 256
    /// Connections one client address may hold at once; more are answered 429 and closed at
    /// once, so that one client cannot take every slot of ``maximumConnections``.
    public var maximumConnectionsPerClient = 64
    /// Seconds a request's head may take to arrive in full (from the connection's start, or
    /// from the first byte of a later request on it); then 408 and the connection is closed.
    public var headerTimeout: Double = 5
    /// Seconds a request's body may take to arrive beyond one second per ``bodyBytesPerSecond``
    /// bytes of it (time the server itself is not reading is not counted); then 408 and the
    /// connection is closed.
    public var bodyTimeout: Double = 10
    /// The slowest rate a long body may arrive at, past ``bodyTimeout`` (bytes per second).
    public static let bodyBytesPerSecond = 4_096
    /// `"health_listen"`: a second listener that answers only `GET /livez` and `GET /readyz`,
    /// with connections of its own, for probes that must get through a flood of the API's.
    public var healthHost: String?
    /// The health listener's port (0: any free port, logged at start); nil without one.
    public var healthPort: Int?
    /// When `GET /readyz` calls a process flapping (`"readiness": {"failures": 3, "window": 60}`).
    public var readiness = Readiness()

    /// The schema of `"http"` (part of ``HostSchema``).
    public static let schema: JSONValue = [
        "description": "The HTTP API, dashboard and metrics. Off unless present. Nothing but GET /livez answers without credentials (tokens or users).",
        "type": "object",
        "required": ["listen"],
        "additionalProperties": false,
        "properties": [
            "listen": ["type": "string", "minLength": 1, "description": "HOST:PORT to listen on, e.g. \"127.0.0.1:8080\" or \"[::1]:8080\"; port 0 takes any free port (the log says which). An address that is not loopback needs \"tls\" (or \"allow_insecure_remote\": true)."],
            "max_body_bytes": ["type": "integer", "minimum": 1024, "maximum": 67_108_864, "default": 1_048_576,
                               "description": "The largest request body accepted; larger ones get 413."],
            "tokens": [
                "description": "Bearer tokens for programs (Authorization: Bearer TOKEN): a string (admin), or {\"token\", \"role\", \"name\", \"grants\"}. Written as ${env:NAME} (never in the file: readers of the settings would see them); at least 16 characters.",
                "type": "array",
                "items": [
                    "type": ["string", "object"],
                    "if": ["type": "object"],
                    "then": [
                        "required": ["token"],
                        "additionalProperties": false,
                        "properties": [
                            "token": ["type": "string", "description": "The bearer token clients send (Authorization: Bearer TOKEN); write it as ${env:NAME}."],
                            "role": roles,
                            "name": ["type": "string", "minLength": 1, "maxLength": 64, "description": "Shown in the audit (default: token #N)."],
                            "grants": ["type": "array", "items": ["enum": ["publish", "signal"]], "uniqueItems": true,
                                       "description": "Changes a token of the read role may make besides reading: \"publish\" (POST /api/events), \"signal\" (POST /api/workflow-runs/{id}/signals/{name})."],
                        ],
                    ],
                ],
            ],
            "users": [
                "description": "People who log in (the dashboard, POST /api/login): name → {\"password_hash\": a bcrypt hash from `agent-control hash-password`, \"role\"}.",
                "type": "object",
                "propertyNames": ["pattern": "^[A-Za-z0-9._@-]{1,64}$"],
                "additionalProperties": [
                    "type": "object",
                    "additionalProperties": false,
                    "properties": [
                        "password_hash": ["type": "string", "description": "A bcrypt hash ($2b$12$…) printed by `agent-control hash-password`."],
                        "role": roles,
                        // Accepted by the schema so that reading can say what to do instead.
                        "password": ["description": "Not allowed: store a hash (agent-control hash-password), never the password."],
                    ],
                ],
            ],
            "tls": [
                "description": "Serve HTTPS: PEM files, relative to the agent's folder.",
                "type": "object",
                "required": ["certificate", "key"],
                "additionalProperties": false,
                "properties": [
                    "certificate": ["type": "string", "minLength": 1, "description": "The certificate chain (PEM)."],
                    "key": ["type": "string", "minLength": 1, "description": "The private key (PEM)."],
                ],
            ],
            "allow_insecure_remote": ["type": "boolean", "default": false,
                                      "description": "Listen on an address that is not loopback without TLS (passwords and tokens then cross the network in clear)."],
            "session_ttl": ["type": "number", "minimum": 60, "maximum": SettingsBounds.json(SettingsBounds.longestWindow), "default": 28_800,
                            "description": "Seconds without a request after which a login session ends."],
            "login_limit": [
                "description": "Failed logins allowed per client address and per user name within a window; more get 429 until the window passes.",
                "type": "object",
                "additionalProperties": false,
                "properties": [
                    "failures": ["type": "integer", "minimum": 1, "maximum": 1000, "default": 5,
                                 "description": "Failed logins allowed within the window, per client address and per user name."],
                    "window": ["type": "number", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.longestWindow), "default": 900,
                               "description": "Seconds the failed logins are counted over."],
                ],
            ],
            "idle_timeout": ["type": "number", "minimum": 1, "maximum": 3600, "default": 30,
                             "description": "Seconds a connection may stay silent between requests, or while a body arrives, before it is closed."],
            "header_timeout": ["type": "number", "minimum": 0.5, "maximum": 300, "default": 5,
                               "description": "Seconds a request's head (request line and headers) may take to arrive in full, counted from the connection's start or from the first byte of a later request on it; then the client gets 408 and the connection is closed."],
            "body_timeout": ["type": "number", "minimum": 0.5, "maximum": 3600, "default": 10,
                             "description": "Seconds a request's body may take to arrive beyond one second per 4 KiB of it (time the agent itself is not reading is not counted): a client that sends its body a byte at a time cannot hold a connection; then 408 and the connection is closed."],
            "max_connections": ["type": "integer", "minimum": 1, "maximum": 100_000, "default": 256,
                                "description": "Connections served at once; more wait in the listen backlog until one closes."],
            "max_connections_per_client": ["type": "integer", "minimum": 1, "maximum": 100_000, "default": 64,
                                           "description": "Connections one client address may hold at once; more are answered 429 and closed. Behind a reverse proxy every client has the proxy's address: raise it to max_connections."],
            "health_listen": ["type": "string", "minLength": 1,
                              "description": "HOST:PORT of a second listener that answers only GET /livez and GET /readyz, with 16 connections of its own and the same header_timeout: point liveness and readiness probes at it, so that a flood of the API's connections never fails a probe. Same rules as \"listen\" (TLS when not loopback)."],
            "readiness": [
                "description": "GET /readyz: a process whose workers ended unasked `failures` times within `window` seconds is flapping (not ready) until the oldest of them leaves the window.",
                "type": "object", "additionalProperties": false,
                "properties": [
                    "failures": ["type": "integer", "minimum": 1, "maximum": 100, "default": .number(JSONNumber(Readiness.defaultFailures)),
                                 "description": "Unasked ends of a process's workers within the window that make it flapping."],
                    "window": ["type": "number", "minimum": 1, "maximum": 86400, "default": .number(JSONNumber(Readiness.defaultWindow)),
                               "description": "Seconds the ends are counted over."],
                ],
            ],
        ],
    ]

    /// The settings' `"http"`, or nil when absent. Assumes the host schema's checks passed.
    /// `${env:NAME}` in tokens is resolved from `environment`; relative TLS paths are taken
    /// from `agentDirectory`.
    public init?(_ json: JSONValue?, agentDirectory: String = FileManager.default.currentDirectoryPath,
                 environment: [String: String] = ProcessInfo.processInfo.environment) throws(SettingsIssueList) {
        guard let json, json.objectValue != nil else { return nil }
        guard let listen = json["listen"]?.stringValue, let (host, port) = Self.parseListen(listen) else {
            throw SettingsIssueList([("/http/listen", "expected HOST:PORT with a port from 0 to 65535 (0: any free port, shown at start) (e.g. \"127.0.0.1:8080\" or \"[::1]:8080\"); found \(Describe.value(json["listen"] ?? .null))")])
        }
        self.host = host
        self.port = port
        if let bytes = json["max_body_bytes"]?.numberValue?.intValue { maximumBodyBytes = bytes }
        if let seconds = json["idle_timeout"]?.numberValue?.doubleValue { idleTimeout = seconds }
        if let count = json["max_connections"]?.numberValue?.intValue { maximumConnections = count }
        if let count = json["max_connections_per_client"]?.numberValue?.intValue { maximumConnectionsPerClient = count }
        if let seconds = json["header_timeout"]?.numberValue?.doubleValue { headerTimeout = seconds }
        if let seconds = json["body_timeout"]?.numberValue?.doubleValue { bodyTimeout = seconds }
        if let failures = json["readiness"]?["failures"]?.numberValue?.intValue { readiness.failures = failures }
        if let window = json["readiness"]?["window"]?.numberValue?.doubleValue { readiness.window = window }
        if let value = json["allow_insecure_remote"]?.boolValue { allowInsecureRemote = value }
        if let value = json["session_ttl"]?.numberValue?.doubleValue { sessionTTL = value }
        if let value = json["login_limit"]?["failures"]?.numberValue?.intValue { loginFailures = value }
        if let value = json["login_limit"]?["window"]?.numberValue?.doubleValue { loginWindow = value }

        var issues: [(pointer: String, message: String)] = []
        tokens = Self.readTokens(json["tokens"], environment: environment, issues: &issues)
        users = Self.readUsers(json["users"], issues: &issues)
        Self.checkIdentityNames(tokens: json["tokens"], users: json["users"], issues: &issues)
        tls = Self.readTLS(json["tls"], agentDirectory: agentDirectory, issues: &issues)
        readHealthListen(json["health_listen"], tlsGiven: json["tls"] != nil, issues: &issues)
        if (json["tokens"]?.arrayValue ?? []).isEmpty, (json["users"]?.objectValue ?? [:]).isEmpty {
            issues.append(("/http", "expected \"tokens\" or \"users\": nothing but GET /livez answers without credentials; add \"tokens\": [\"${env:AGENT_API_TOKEN}\"] or a user with a hash from `agent-control hash-password`"))
        }
        if tls == nil, !allowInsecureRemote, !Self.isLoopback(host), json["tls"] == nil {
            issues.append(("/http/listen", "\(host) is not a loopback address: without \"tls\" passwords and tokens would cross the network in clear; add \"tls\": {\"certificate\": …, \"key\": …}, listen on 127.0.0.1, or set \"allow_insecure_remote\": true"))
        }
        if !issues.isEmpty { throw SettingsIssueList(issues) }
    }

    /// `"health_listen"`: where, on another port than `"listen"`, under the same TLS rule.
    private mutating func readHealthListen(_ json: JSONValue?, tlsGiven: Bool, issues: inout [(pointer: String, message: String)]) {
        guard let json else { return }
        guard let text = json.stringValue, let (host, port) = Self.parseListen(text) else {
            return issues.append(("/http/health_listen", "expected HOST:PORT with a port from 0 to 65535 (e.g. \"127.0.0.1:8081\"); found \(Describe.value(json))"))
        }
        if port != 0, port == self.port {
            issues.append(("/http/health_listen", "expected a port other than \"listen\"'s (\(port)): the health listener is a socket of its own"))
        }
        if !tlsGiven, !allowInsecureRemote, !Self.isLoopback(host) {
            issues.append(("/http/health_listen", "\(host) is not a loopback address: without \"tls\" the tokens of GET /readyz would cross the network in clear; add \"tls\", listen on 127.0.0.1, or set \"allow_insecure_remote\": true"))
        }
        (healthHost, healthPort) = (host, port)
    }

    /// `127.0.0.1:8080` → ("127.0.0.1", 8080); `[::1]:8080` → ("::1", 8080).
    package static func parseListen(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]") else { return nil }
            host = String(host.dropFirst().dropLast())
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else { return nil }
        return (host, port)
    }

    /// `localhost`, `127.x.x.x`, `::1`: only this machine can connect.
    public static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in UInt8(part) != nil }
    }
}
