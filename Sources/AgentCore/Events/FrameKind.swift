/// The kind of a frame of the worker wire protocol (one byte after the length).
public struct FrameKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    // Supervisor → worker
    /// JSON: `{"module": path, "type": t, "name": n, "settings": {...}}`.
    public static let start = FrameKind(rawValue: 1)
    /// An event for a subscriber: see ``EventFrame``.
    public static let deliver = FrameKind(rawValue: 2)
    /// Reply to ``loadState``: one status byte (0 = found, 1 = none, 2 = error), then the bytes.
    public static let stateData = FrameKind(rawValue: 3)
    /// Reply to ``saveState``: one status byte (0 = saved).
    public static let stateSaved = FrameKind(rawValue: 4)
    /// Asks the process to stop. Empty body.
    public static let stop = FrameKind(rawValue: 5)
    /// Reply to ``query``: one status byte (0 = rows, 1 = error), then JSON (rows or a message).
    public static let queryResult = FrameKind(rawValue: 6)
    /// The worker's delivery ring (see ``SharedRing``), sent before ``start`` with two fds
    /// attached: the ring's memfd and an eventfd on which the worker signals freed room. Body:
    /// the ring's capacity as a little-endian `UInt64`.
    public static let ring = FrameKind(rawValue: 7)
    /// Deliveries were published to the ring while the worker waited for them. Empty body.
    public static let wake = FrameKind(rawValue: 8)

    // Worker → supervisor
    /// The module is loaded and the process is starting. Empty body.
    public static let ready = FrameKind(rawValue: 20)
    /// An emitted event: see ``EventFrame``.
    public static let event = FrameKind(rawValue: 21)
    /// A message: one level byte, then UTF-8 text.
    public static let message = FrameKind(rawValue: 22)
    /// A log line: one level byte, then UTF-8 text.
    public static let log = FrameKind(rawValue: 23)
    /// The process is alive. Empty body.
    public static let heartbeat = FrameKind(rawValue: 24)
    /// Asks for the process's saved state. Empty body.
    public static let loadState = FrameKind(rawValue: 25)
    /// Replaces the process's saved state with the body.
    public static let saveState = FrameKind(rawValue: 26)
    /// The module's manifest (JSON), in answer to a describe request.
    public static let manifest = FrameKind(rawValue: 27)
    /// A failure before or after the run: JSON `{"code": ..., "message": ...}`.
    public static let failure = FrameKind(rawValue: 28)
    /// A read-only store query: JSON `{"sql": ..., "params": [...]}`.
    public static let query = FrameKind(rawValue: 29)
    /// The process took deliveries that came on the socket: their frames' size in bytes, as a
    /// little-endian `UInt64` (see ``FrameCodec/deliveryWindow``).
    public static let taken = FrameKind(rawValue: 30)

    public var description: String {
        switch self {
        case .start: "start"
        case .deliver: "deliver"
        case .stateData: "state-data"
        case .stateSaved: "state-saved"
        case .stop: "stop"
        case .ready: "ready"
        case .event: "event"
        case .message: "message"
        case .log: "log"
        case .heartbeat: "heartbeat"
        case .loadState: "load-state"
        case .saveState: "save-state"
        case .manifest: "manifest"
        case .failure: "failure"
        case .query: "query"
        case .queryResult: "query-result"
        case .taken: "taken"
        case .ring: "ring"
        case .wake: "wake"
        default: "kind \(rawValue)"
        }
    }
}
