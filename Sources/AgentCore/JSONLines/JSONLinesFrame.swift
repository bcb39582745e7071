import JSONSchema

/// One line of the `jsonl/1` protocol between the runtime and a module's program: a JSON
/// object with exactly one member, whose name says what the frame is
/// (docs/jsonl-protocol.md has the table of every frame).
///
/// The runtime writes `start`, `event`, `chat`, `run` and `stop`; the program writes the
/// rest. Decoded from a line with ``init(line:)`` (the hot path: one parse, no `Decoder`) or
/// through `Codable`; ``line`` is the frame's text with its newline.
public enum JSONLinesFrame: Equatable, Sendable {
    // MARK: Runtime → program

    /// The first line the program reads: its settings (defaults applied) and its name.
    case start(Start)
    /// An event a monitor or logic adapter subscribed to.
    case event(Event)
    /// A chat message for a logic adapter, answered by one ``answer(_:)``.
    case chat(Chat)
    /// A task run for a task handler, ended by one ``result(_:)`` or ``error(_:)`` with its id.
    case run(Run)
    /// The runtime cancels a task run (`{"cancel": {"id"}}`): the program should end it soon,
    /// with an `error`. (Beyond the list: a cancel must reach the program.)
    case cancel(id: String)
    /// The runtime asks the program to end (SIGTERM follows if it does not).
    case stop

    // MARK: Program → runtime

    /// The program is ready: ends the start timeout (`{"ready": true}`).
    case ready
    /// An event for the processes subscribed to its type.
    case emit(Emit)
    /// A human-readable message (the console, the chat's alerts at warning and above).
    case message(Message)
    /// An alert: a message at warning level (`{"alert": "text"}` or `{"alert": {"text": …}}`).
    case alert(String)
    /// Proof of life for the watchdog (`{"heartbeat": true}`); also a heartbeat of every run.
    case heartbeat
    /// The process's state, saved like a Swift process's and given back in the next `start`.
    case state(JSONValue)
    /// A task run's progress.
    case progress(Progress)
    /// A task run's result.
    case result(Result)
    /// A task run's failure (with `id`), or the program's own (without).
    case error(Failure)
    /// A logic adapter's answer to the last `chat`.
    case answer(Answer)

    /// The protocol this enum speaks, as a manifest's `"protocol"` names it.
    public static let protocolName = "jsonl/1"

    public struct Start: Equatable, Sendable, Codable {
        /// The process's settings, the manifest schema's defaults applied.
        public var settings: JSONValue
        /// The process's name (`name#N` for a replica, the task's name for a task handler).
        public var process: String
        /// The process type from the manifest (a program may serve several).
        public var type: String?
        /// The state last saved with `{"state": …}`, when there is one.
        public var state: JSONValue?
        /// The process's watchdog in seconds, when it has one: a heartbeat must come more often.
        public var watchdog: Double?

        public init(settings: JSONValue, process: String, type: String? = nil, state: JSONValue? = nil, watchdog: Double? = nil) {
            self.settings = settings
            self.process = process
            self.type = type
            self.state = state
            self.watchdog = watchdog
        }
    }

    public struct Event: Equatable, Sendable, Codable {
        public var type: String
        /// The process that emitted it.
        public var source: String
        /// When it was emitted, seconds since the Unix epoch (UTC).
        public var time: Double
        /// The payload: its JSON, or a string when it was not JSON.
        public var payload: JSONValue

        public init(type: String, source: String, time: Double, payload: JSONValue) {
            self.type = type
            self.source = source
            self.time = time
            self.payload = payload
        }
    }

    public struct Chat: Equatable, Sendable, Codable {
        public var message: String
        /// The conversation so far and who asks (`conversation`, `history`).
        public var context: JSONValue
        /// The message's id, which its `answer` echoes (a late answer is then never taken for
        /// a later message's).
        public var id: String?

        public init(message: String, context: JSONValue = .object([:]), id: String? = nil) {
            self.message = message
            self.context = context
            self.id = id
        }
    }

    public struct Run: Equatable, Sendable, Codable {
        /// The run's id; every `progress`, `result` and `error` of the run carries it.
        public var id: String
        public var input: JSONValue

        public init(id: String, input: JSONValue) {
            self.id = id
            self.input = input
        }
    }

    public struct Emit: Equatable, Sendable, Codable {
        public var type: String
        /// Any JSON (null when left out).
        public var payload: JSONValue

        public init(type: String, payload: JSONValue = .null) {
            self.type = type
            self.payload = payload
        }
    }

    public struct Message: Equatable, Sendable, Codable {
        /// `debug`, `info` (when left out), `warning`, `error` or `critical`.
        public var level: Level
        public var text: String

        public init(level: Level = .info, text: String) {
            self.level = level
            self.text = text
        }

        /// The module ABI's levels (AGENT_LOG_DEBUG … AGENT_LOG_CRITICAL), by name.
        public enum Level: String, Equatable, Sendable, Codable, CaseIterable {
            case debug, info, warning, error, critical

            /// The ABI's number for the level.
            public var number: Int32 { Int32(Self.allCases.firstIndex(of: self)!) }
        }
    }

    public struct Progress: Equatable, Sendable, Codable {
        public var id: String
        /// 0…1 when known.
        public var fraction: Double?
        public var message: String?

        public init(id: String, fraction: Double? = nil, message: String? = nil) {
            self.id = id
            self.fraction = fraction
            self.message = message
        }
    }

    public struct Result: Equatable, Sendable, Codable {
        public var id: String
        /// The run's output (null when left out).
        public var output: JSONValue

        public init(id: String, output: JSONValue = .null) {
            self.id = id
            self.output = output
        }
    }

    public struct Failure: Equatable, Sendable, Codable {
        /// The run that failed; nil: the program reports its own failure (it should exit then).
        public var id: String?
        public var message: String

        public init(id: String? = nil, message: String) {
            self.id = id
            self.message = message
        }
    }

    public struct Answer: Equatable, Sendable, Codable {
        /// 0…1: how sure the adapter is; the chatbot takes the most confident answer.
        public var confidence: Double
        public var text: String
        /// The `chat` frame's id it answers (optional: without it answers are taken in order).
        public var id: String?

        public init(confidence: Double, text: String, id: String? = nil) {
            self.confidence = confidence
            self.text = text
            self.id = id
        }
    }
}
