import AgentBase
import Foundation
import JSONSchema

/// One configured output: where records go, which kinds, and how many may wait.
///
/// Built from one element of the settings' `"outputs"` array (see `schema`):
///
/// ```json
/// {"type": "stdout", "kinds": ["message"]}
/// {"type": "file", "path": "log/outputs.jsonl", "max_bytes": 10485760, "keep": 5}
/// {"type": "webhook", "url": "https://hooks.example/agent", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
/// ```
public struct OutputConfiguration: Sendable, Equatable {
    /// Where records go.
    public enum Destination: Sendable, Equatable {
        /// JSON lines to the process's standard output.
        case stdout
        /// JSON lines appended to a file, rotated by size.
        case file(File)
        /// Batches POSTed as JSON arrays.
        case webhook(Webhook)
    }

    /// A file output's settings.
    public struct File: Sendable, Equatable {
        /// The file, as configured (relative paths are relative to the hub's base directory).
        public var path: String
        /// Size at which the file is rotated (`path` → `path.1` → … → `path.keep`).
        public var maxBytes: Int
        /// How many rotated files are kept; the oldest beyond that is removed.
        public var keep: Int

        /// Creates file settings.
        public init(path: String, maxBytes: Int = 10_485_760, keep: Int = 5) {
            self.path = path
            self.maxBytes = maxBytes
            self.keep = keep
        }
    }

    /// A webhook output's settings.
    public struct Webhook: Sendable, Equatable {
        /// The URL, with `${env:…}` references resolved.
        public var url: URL
        /// Records per POST at most; a batch is sent as soon as this many are queued.
        public var batchSize: Int
        /// Seconds a queued record waits for its batch to fill before it is sent anyway.
        public var batchInterval: Double
        /// Seconds before an attempt is abandoned.
        public var timeout: Double
        /// Retries after the first failed attempt; then the batch is dropped and counted.
        public var maxRetries: Int
        /// Delay before the first retry; it doubles with each retry.
        public var retryInitialDelay: Double
        /// Cap on the delay between retries.
        public var retryMaxDelay: Double
        /// Extra request headers (`${env:…}` resolved), in configuration order.
        public var headers: [Header]
        /// Each value that the URL took from the environment, with the reference it came from
        /// (`"${env:HOOK_HOST}"`): a failed attempt's message (which may name the host) shows
        /// the reference instead of the value.
        public var environmentValues: [String: String]

        /// One request header.
        public struct Header: Sendable, Equatable {
            /// The header name.
            public var name: String
            /// Its value.
            public var value: String

            /// Creates a header.
            public init(name: String, value: String) {
                self.name = name
                self.value = value
            }
        }

        /// Creates webhook settings with the documented defaults.
        public init(
            url: URL, batchSize: Int = 100, batchInterval: Double = 1, timeout: Double = 5, maxRetries: Int = 5,
            retryInitialDelay: Double = 0.5, retryMaxDelay: Double = 30, headers: [Header] = [],
            environmentValues: [String: String] = [:]
        ) {
            self.url = url
            self.batchSize = batchSize
            self.batchInterval = batchInterval
            self.timeout = timeout
            self.maxRetries = maxRetries
            self.retryInitialDelay = retryInitialDelay
            self.retryMaxDelay = retryMaxDelay
            self.headers = headers
            self.environmentValues = environmentValues
        }

        /// `text` with every value that came from the environment replaced by its reference.
        package func redacted(_ text: String) -> String {
            // Longest first, so that a value containing another is replaced whole.
            environmentValues.keys.sorted { $0.count > $1.count }.reduce(text) { text, value in
                text.replacingOccurrences(of: value, with: environmentValues[value] ?? "")
            }
        }
    }

    /// Default capacity of an output's queue (the webhook's `buffer`).
    public static let defaultBuffer = 10_000
    /// Default bytes an output's queue holds at most (`buffer_bytes`): 10,000 records of 60 KB
    /// from a flood of large events held 2 GB in the supervisor for every output that failed.
    public static let defaultBufferBytes = 8 << 20

    /// The name shown in statistics and logs: `name` if configured, else e.g. `stdout`,
    /// `file log/out.jsonl` or `webhook https://hooks.example/agent` (the URL as written, so
    /// that secrets from the environment are never shown).
    public var name: String
    /// Where records go.
    public var destination: Destination
    /// Which kinds of records this output receives.
    public var kinds: Set<OutputRecord.Kind>
    /// Capacity of the output's queue; when it is full, the oldest record is dropped and
    /// counted.
    public var buffer: Int
    /// Bytes the output's queue holds at most; past them, the oldest records are dropped and
    /// counted too.
    public var bufferBytes: Int

    /// Creates a configuration directly (settings files go through `init(json:)`).
    public init(
        name: String, destination: Destination, kinds: Set<OutputRecord.Kind> = Set(OutputRecord.Kind.allCases),
        buffer: Int = OutputConfiguration.defaultBuffer, bufferBytes: Int = OutputConfiguration.defaultBufferBytes
    ) {
        self.name = name
        self.destination = destination
        self.kinds = kinds
        self.buffer = buffer
        self.bufferBytes = bufferBytes
    }

    /// The type name as written in settings: `stdout`, `file` or `webhook`.
    public var typeName: String {
        switch destination {
        case .stdout: "stdout"
        case .file: "file"
        case .webhook: "webhook"
        }
    }

    /// Parses one output object. The settings are expected to have passed `schema` already,
    /// but nonsense is still refused with an error naming the key; `${env:NAME}` in the
    /// webhook's `url` and header values is resolved here from `environment`, and a missing
    /// variable is an error naming it.
    public init(
        json: JSONValue, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OutputConfigurationError) {
        guard case .object(let object) = json else {
            throw OutputConfigurationError(pointer: JSONPointer(), message: "expected an output object, found \(json.typeName)")
        }
        let reader = OutputSettingsReader(object: object)
        let type = try reader.string("type", required: true) ?? ""
        let common: Set<String> = ["type", "name", "kinds", "buffer", "buffer_bytes"]
        let written: String
        switch type {
        case "stdout":
            try reader.rejectUnknownKeys(allowed: common)
            destination = .stdout
            written = "stdout"
        case "file":
            try reader.rejectUnknownKeys(allowed: common.union(["path", "max_bytes", "keep"]))
            let path = try reader.string("path", required: true) ?? ""
            guard !path.isEmpty else { throw reader.error("path", "expected a file path, found an empty string") }
            destination = .file(File(
                path: path, maxBytes: try reader.integer("max_bytes", default: 10_485_760, minimum: 1, maximum: SettingsBounds.largestFileBytes),
                keep: try reader.integer("keep", default: 5, minimum: 0, maximum: SettingsBounds.mostRotatedFiles)
            ))
            written = "file \(path)"
        case "webhook":
            try reader.rejectUnknownKeys(allowed: common.union([
                "url", "batch_size", "batch_interval", "timeout", "max_retries", "retry_initial_delay",
                "retry_max_delay", "headers",
            ]))
            let urlText = try reader.string("url", required: true) ?? ""
            destination = .webhook(Webhook(
                url: try Self.webhookURL(urlText, reader: reader, environment: environment),
                batchSize: try reader.integer("batch_size", default: 100, minimum: 1, maximum: SettingsBounds.largestBatch),
                batchInterval: try reader.number("batch_interval", default: 1, minimum: 0, maximum: SettingsBounds.longestTimeout),
                timeout: try reader.number("timeout", default: 5, minimum: 0, exclusive: true, maximum: SettingsBounds.longestTimeout),
                maxRetries: try reader.integer("max_retries", default: 5, minimum: 0, maximum: SettingsBounds.mostRetries),
                retryInitialDelay: try reader.number("retry_initial_delay", default: 0.5, minimum: 0, maximum: SettingsBounds.longestTimeout),
                retryMaxDelay: try reader.number("retry_max_delay", default: 30, minimum: 0, maximum: SettingsBounds.longestTimeout),
                headers: try Self.headers(reader: reader, environment: environment),
                environmentValues: EnvironmentReferences.values(in: urlText, environment: environment)
            ))
            written = "webhook \(Self.displayURL(urlText))"
        default:
            throw reader.error("type", "unknown output type \"\(type)\"; expected \"stdout\", \"file\" or \"webhook\"")
        }
        name = try reader.string("name", required: false) ?? written
        kinds = try reader.kinds()
        buffer = try reader.integer("buffer", default: Self.defaultBuffer, minimum: 1, maximum: SettingsBounds.largestOutputBuffer)
        bufferBytes = try reader.integer("buffer_bytes", default: Self.defaultBufferBytes, minimum: 1 << 16, maximum: SettingsBounds.largestOutputBufferBytes)
    }

    /// Parses the settings' `"outputs"` array; errors point into it (`/1/url`).
    public static func list(
        json: JSONValue, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OutputConfigurationError) -> [OutputConfiguration] {
        guard case .array(let elements) = json else {
            throw OutputConfigurationError(pointer: JSONPointer(), message: "expected an array of outputs, found \(json.typeName)")
        }
        var configurations: [OutputConfiguration] = []
        for (index, element) in elements.enumerated() {
            do throws(OutputConfigurationError) {
                configurations.append(try OutputConfiguration(json: element, environment: environment))
            } catch {
                throw error.inElement(index)
            }
        }
        return configurations
    }

    private static func webhookURL(
        _ written: String, reader: OutputSettingsReader, environment: [String: String]
    ) throws(OutputConfigurationError) -> URL {
        let text: String
        do throws(EnvironmentReferences.Failure) {
            text = try EnvironmentReferences.resolve(written, environment: environment)
        } catch {
            throw reader.error("url", error.message)
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw reader.error("url", "expected an http:// or https:// URL, found \"\(displayURL(written))\"")
        }
        // Foundation gives no port for one past Int's range (the POST then went to port 80),
        // and getaddrinfo takes 70000 as 4464: a port must be 1 to 65535.
        if let port = portText(text), !(port.isEmpty || (port.allSatisfy(\.isASCII) && port.allSatisfy(\.isNumber)
            && port.count <= 5 && (1...65535).contains(Int(port) ?? 0)))
        {
            let shown = EnvironmentReferences.containsReference(written) ? displayURL(written) : String(port)
            throw reader.error("url", "expected a port from 1 to 65535 in the URL, found \"\(shown)\"")
        }
        return url
    }

    private static func headers(reader: OutputSettingsReader, environment: [String: String]) throws(OutputConfigurationError) -> [Webhook.Header] {
        guard let value = reader.object["headers"] else { return [] }
        guard case .object(let members) = value else {
            throw reader.error("headers", "expected an object of header names to strings, found \(value.typeName)")
        }
        var headers: [Webhook.Header] = []
        for (name, member) in members {
            let pointer = JSONPointer(tokens: ["headers", name])
            guard Self.isToken(name) else {
                throw OutputConfigurationError(pointer: pointer, message: "\"\(name)\" is not a valid HTTP header name")
            }
            guard !["content-length", "transfer-encoding", "connection"].contains(name.lowercased()) else {
                throw OutputConfigurationError(pointer: pointer, message: "\"\(name)\" is set by the runtime and cannot be configured")
            }
            guard case .string(let written) = member else {
                throw OutputConfigurationError(pointer: pointer, message: "expected a string, found \(member.typeName)")
            }
            let value: String
            do throws(EnvironmentReferences.Failure) {
                value = try EnvironmentReferences.resolve(written, environment: environment)
            } catch {
                throw OutputConfigurationError(pointer: pointer, message: error.message)
            }
            // A line break would let a header value smuggle in more headers. Checked by scalar:
            // "\r\n" is one Character, equal to neither "\r" nor "\n".
            guard !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) else {
                throw OutputConfigurationError(pointer: pointer, message: "a header value may not contain a line break or another control character")
            }
            headers.append(Webhook.Header(name: name, value: value))
        }
        return headers
    }

    /// RFC 9110 token characters.
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }

    /// The port of `url`'s authority as written (after the host, `[…]` for IPv6), or nil
    /// when it has none.
    package static func portText(_ url: String) -> Substring? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        var authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let bracket = authority.lastIndex(of: "]") { authority = authority[authority.index(after: bracket)...] }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        return authority[authority.index(after: colon)...]
    }

    /// A URL as written, without user info or query, which may carry secrets.
    package static func displayURL(_ written: String) -> String {
        var text = written
        if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = String(text[..<query]) }
        if let schemeEnd = text.range(of: "://") {
            let authorityStart = schemeEnd.upperBound
            let authorityEnd = text[authorityStart...].firstIndex(of: "/") ?? text.endIndex
            if let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") {
                text.removeSubrange(authorityStart...at)
            }
        }
        return text
    }
}
