import Foundation
import JSONSchema
import Logging

/// The agent's outputs: events and messages also sent, as JSON, to stdout, files and
/// webhooks (the settings' `"outputs"` array), off the supervisor's hot path.
///
/// `publish` never waits for an output: each output has its own bounded queue (the
/// `buffer` setting, 10,000 records by default) emptied by its own thread. When a queue is
/// full, its **oldest record is dropped** and counted in `statistics` — a slow or dead
/// output costs old records, never the supervisor's time, and nothing is dropped silently.
///
/// ```swift
/// let outputs = try OutputHub(json: settings["outputs"] ?? [], baseDirectory: agentFolder, logger: logger)
/// outputs.publish(.event(source: "trades", type: "trade", payload: payload, time: now))
/// …
/// outputs.stop(timeout: 5)
/// ```
public final class OutputHub: Sendable {
    // Immutable after init, so `publish` reads them without a lock.
    private let channels: [OutputChannel]
    private let eventChannels: [OutputChannel]
    private let messageChannels: [OutputChannel]

    /// How a webhook posts: by URL scheme (sockets for http, libcurl for https), or always
    /// libcurl (tests use it to cover that path against a plain-HTTP server).
    package enum WebhookTransportChoice {
        case byScheme
        case curl
    }

    /// Creates the outputs and starts their threads.
    ///
    /// - Parameters:
    ///   - configurations: The outputs (see `OutputConfiguration`).
    ///   - baseDirectory: The agent's folder; relative file paths are relative to it.
    ///   - logger: Where failures are logged (e.g. `output webhook http://…: attempt 2 failed:
    ///     HTTP 503; retrying in 1.0 s`).
    /// - Throws: `OutputConfigurationError` pointing at the output (`/1/path`) when a file
    ///   cannot be opened; nothing is started then.
    public convenience init(configurations: [OutputConfiguration], baseDirectory: String, logger: Logger) throws(OutputConfigurationError) {
        try self.init(configurations: configurations, baseDirectory: baseDirectory, logger: logger, standardOutput: 1, webhookTransport: .byScheme)
    }

    /// Parses the settings' `"outputs"` array (see `OutputConfiguration.list(json:)`), then
    /// creates the outputs and starts their threads.
    public convenience init(
        json: JSONValue, baseDirectory: String, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OutputConfigurationError) {
        let configurations = try OutputConfiguration.list(json: json, environment: environment)
        try self.init(configurations: configurations, baseDirectory: baseDirectory, logger: logger)
    }

    package init(
        configurations: [OutputConfiguration], baseDirectory: String, logger: Logger, standardOutput: Int32,
        webhookTransport: WebhookTransportChoice
    ) throws(OutputConfigurationError) {
        var channels: [OutputChannel] = []
        var files: [RotatingFile] = []
        for (index, configuration) in configurations.enumerated() {
            let sink: any OutputSink
            switch configuration.destination {
            case .stdout:
                sink = JSONLinesSink(target: .descriptor(standardOutput), label: configuration.name)
            case .file(let settings):
                let path = settings.path.hasPrefix("/") ? settings.path : (baseDirectory as NSString).appendingPathComponent(settings.path)
                let file = RotatingFile(path: path, maxBytes: settings.maxBytes, keep: settings.keep)
                do throws(RotatingFile.Failure) {
                    // Opened now so that an unwritable path stops the agent before it starts.
                    try file.open()
                } catch {
                    files.forEach { $0.close() }
                    throw OutputConfigurationError(pointer: JSONPointer(tokens: [String(index), "path"]), message: error.description)
                }
                files.append(file)
                sink = JSONLinesSink(target: .file(file), label: configuration.name)
            case .webhook(let settings):
                let transport: any WebhookTransport
                if webhookTransport == .byScheme, settings.url.scheme?.lowercased() == "http" {
                    transport = SocketHTTPTransport(url: settings.url, headers: settings.headers)
                } else {
                    transport = CurlTransport(url: settings.url, headers: settings.headers)
                }
                sink = WebhookSink(settings: settings, label: configuration.name, transport: transport)
            }
            channels.append(OutputChannel(configuration: configuration, sink: sink, logger: logger))
        }
        self.channels = channels
        eventChannels = channels.filter { $0.kinds.contains(.event) }
        messageChannels = channels.filter { $0.kinds.contains(.message) }
        channels.forEach { $0.start() }
    }

    deinit {
        // Without `stop`, threads would wait on their queues forever: end them now.
        let now = OutputChannel.now()
        channels.forEach { $0.requestStop(deadline: now) }
    }

    /// Whether no output is configured (the supervisor can skip building records).
    public var isEmpty: Bool { channels.isEmpty }

    /// Whether any output takes records of `kind`; when none does, the supervisor need not
    /// build them (copying the payload) at all.
    public func wants(_ kind: OutputRecord.Kind) -> Bool {
        switch kind {
        case .event: !eventChannels.isEmpty
        case .message: !messageChannels.isEmpty
        }
    }

    /// Queues `record` for every output that takes its kind. Never waits for an output: a
    /// full queue drops its oldest record (counted). After `stop`, records are dropped and
    /// counted.
    public func publish(_ record: OutputRecord) {
        for channel in record.kind == .event ? eventChannels : messageChannels {
            channel.offer(record)
        }
    }

    /// Queues `record` for the outputs named in `names` that take its kind only (task
    /// notifications sent to chosen outputs), with `publish`'s guarantees.
    public func publish(_ record: OutputRecord, toOutputsNamed names: Set<String>) {
        for channel in record.kind == .event ? eventChannels : messageChannels where names.contains(channel.name) {
            channel.offer(record)
        }
    }

    /// Delivers what it can of the queued records within `timeout` seconds (webhook batches
    /// are sent at once, without waiting for `batch_interval`; retries continue until the
    /// deadline), flushes files, then ends the outputs' threads; what is still queued at the
    /// deadline is dropped and counted. Returns `true` when every output finished in time
    /// with nothing dropped for lack of time. Waits at most `timeout` + 0.5 s: a thread stuck
    /// in a write (stdout into a pipe nobody reads) is left behind. Calling it again is
    /// harmless; `publish` after `stop` drops (and counts) the record.
    @discardableResult
    public func stop(timeout: Double) -> Bool {
        let deadline = OutputChannel.now() + max(0, timeout)
        channels.forEach { $0.requestStop(deadline: deadline) }
        // A little past the deadline: the threads need a moment to notice it and account for
        // what is left. A thread stuck in a write (stdout into a full pipe) is left behind.
        let grace = deadline + 0.5
        var complete = true
        for channel in channels where !channel.waitUntilFinished(deadline: grace) {
            complete = false
        }
        return complete
    }

    /// Per output: delivered, dropped, failed attempts, last error, queued.
    public var statistics: [OutputStatistics] {
        channels.map(\.statistics)
    }
}
