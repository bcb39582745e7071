import JSONSchema

/// `"http"`: the HTTP API, dashboard and metrics (off unless present).
public struct HTTPSettings: Sendable, Equatable {
    /// Where to listen.
    public var host: String
    public var port: Int
    /// The largest request body accepted (413 beyond).
    public var maximumBodyBytes = 1 << 20

    /// The schema of `"http"` (part of ``HostSchema``).
    public static let schema: JSONValue = [
        "description": "The HTTP API, dashboard and metrics. Off unless present.",
        "type": "object",
        "required": ["listen"],
        "additionalProperties": false,
        "properties": [
            "listen": ["type": "string", "minLength": 1, "description": "HOST:PORT to listen on, e.g. \"127.0.0.1:8080\" or \"[::1]:8080\"; port 0 takes any free port (the log says which)."],
            "max_body_bytes": ["type": "integer", "minimum": 1024, "maximum": 67_108_864, "default": 1_048_576,
                               "description": "The largest request body accepted; larger ones get 413."],
        ],
    ]

    /// The settings' `"http"`, or nil when absent. Assumes the host schema's checks passed.
    public init?(_ json: JSONValue?) throws(SettingsIssueList) {
        guard let json, json.objectValue != nil else { return nil }
        guard let listen = json["listen"]?.stringValue, let (host, port) = Self.parseListen(listen) else {
            throw SettingsIssueList([("/http/listen", "expected HOST:PORT with a port from 0 to 65535 (0: any free port, shown at start) (e.g. \"127.0.0.1:8080\" or \"[::1]:8080\"); found \(Describe.value(json["listen"] ?? .null))")])
        }
        self.host = host
        self.port = port
        if let bytes = json["max_body_bytes"]?.numberValue?.intValue { maximumBodyBytes = bytes }
    }

    /// `127.0.0.1:8080` → ("127.0.0.1", 8080); `[::1]:8080` → ("::1", 8080).
    static func parseListen(_ text: String) -> (String, Int)? {
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
}

/// Problems found reading a part of the settings: (pointer, message) pairs.
public struct SettingsIssueList: Error, Sendable {
    public var issues: [(pointer: String, message: String)]
    public init(_ issues: [(pointer: String, message: String)]) { self.issues = issues }
}
