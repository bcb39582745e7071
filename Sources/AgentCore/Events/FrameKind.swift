/// The kind of a frame of the worker wire protocol (one byte after the length).
///
/// The kinds are inlinable constants rather than stored globals: they are compared for every
/// frame, where a global's accessor cost a call across modules.
public struct FrameKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    // Supervisor → worker
    /// JSON: `{"module": path, "type": t, "name": n, "settings": {...}}`.
    @inlinable public static var start: FrameKind { FrameKind(rawValue: 1) }
    /// An event for a subscriber: see ``EventFrame``.
    @inlinable public static var deliver: FrameKind { FrameKind(rawValue: 2) }
    /// Reply to ``loadState``: one status byte (0 = found, 1 = none, 2 = error), then the bytes.
    @inlinable public static var stateData: FrameKind { FrameKind(rawValue: 3) }
    /// Reply to ``saveState``: one status byte (0 = saved, 2 = the store cannot write now,
    /// anything else = failed).
    @inlinable public static var stateSaved: FrameKind { FrameKind(rawValue: 4) }
    /// Asks the process to stop. Empty body.
    @inlinable public static var stop: FrameKind { FrameKind(rawValue: 5) }
    /// Reply to ``query``: one status byte (0 = rows, 1 = error), then JSON (rows or a message).
    @inlinable public static var queryResult: FrameKind { FrameKind(rawValue: 6) }
    /// The worker's rings (see ``SharedRing``), sent before ``start`` with four fds attached:
    /// the delivery ring's memfd, an eventfd on which the worker signals the supervisor (room
    /// freed in the delivery ring, frames published in the emit ring), the emit ring's memfd,
    /// and an eventfd on which the supervisor signals freed room in the emit ring. Body: the
    /// two rings' capacities as little-endian `UInt64`s. (Two fds and one capacity: a delivery
    /// ring only, the worker's frames on its socket.)
    @inlinable public static var ring: FrameKind { FrameKind(rawValue: 7) }
    /// Deliveries were published to the ring while the worker waited for them. Empty body.
    @inlinable public static var wake: FrameKind { FrameKind(rawValue: 8) }
    /// Consecutive events of one source and type for a subscriber: see ``EventFrame``'s
    /// `deliverRun` extension.
    @inlinable public static var deliverRun: FrameKind { FrameKind(rawValue: 9) }
    /// A task executor: start a run (see ``TaskFrame``): token, attempt, run id, input JSON.
    @inlinable public static var taskRun: FrameKind { FrameKind(rawValue: 10) }
    /// A task executor: cancel the run of a token (8 bytes).
    @inlinable public static var taskCancel: FrameKind { FrameKind(rawValue: 11) }
    /// Reply to ``memory``: one status byte (0 = the answer, 1 = the request could not be
    /// asked), then JSON (the memory command's answer) or a message.
    @inlinable public static var memoryResult: FrameKind { FrameKind(rawValue: 12) }
    /// Reply to ``chatTool``: laid out as ``queryResult`` (id, status 0 = the answer's JSON,
    /// 1 = a message).
    @inlinable public static var chatToolResult: FrameKind { FrameKind(rawValue: 13) }

    // Worker → supervisor
    /// The module is loaded and the process is starting. Empty body.
    @inlinable public static var ready: FrameKind { FrameKind(rawValue: 20) }
    /// An emitted event: see ``EventFrame``.
    @inlinable public static var event: FrameKind { FrameKind(rawValue: 21) }
    /// A message: one level byte, then UTF-8 text.
    @inlinable public static var message: FrameKind { FrameKind(rawValue: 22) }
    /// A log line: one level byte, then UTF-8 text.
    @inlinable public static var log: FrameKind { FrameKind(rawValue: 23) }
    /// The process is alive. Empty body.
    @inlinable public static var heartbeat: FrameKind { FrameKind(rawValue: 24) }
    /// Asks for the process's saved state. Empty body.
    @inlinable public static var loadState: FrameKind { FrameKind(rawValue: 25) }
    /// Replaces the process's saved state with the body.
    @inlinable public static var saveState: FrameKind { FrameKind(rawValue: 26) }
    /// The module's manifest (JSON), in answer to a describe request.
    @inlinable public static var manifest: FrameKind { FrameKind(rawValue: 27) }
    /// A failure before or after the run: JSON `{"code": ..., "message": ...}`.
    @inlinable public static var failure: FrameKind { FrameKind(rawValue: 28) }
    /// A read-only store query: JSON `{"sql": ..., "params": [...]}`.
    @inlinable public static var query: FrameKind { FrameKind(rawValue: 29) }
    /// The process took deliveries that came on the socket: their frames' size in bytes, as a
    /// little-endian `UInt64` (see ``FrameCodec/deliveryWindow``).
    @inlinable public static var taken: FrameKind { FrameKind(rawValue: 30) }
    /// In the emit ring: the next frame comes on the socket, being too big for the ring. Empty
    /// body. The supervisor handles ring frames after it only once that frame was read.
    @inlinable public static var onSocket: FrameKind { FrameKind(rawValue: 31) }
    /// A task run's progress: token, fraction (NaN: unknown), message (see ``TaskFrame``).
    @inlinable public static var taskProgress: FrameKind { FrameKind(rawValue: 32) }
    /// A task run is alive: its token (8 bytes).
    @inlinable public static var taskHeartbeat: FrameKind { FrameKind(rawValue: 33) }
    /// A task run ended: token, status byte (0 = output JSON follows, 1 = an error message).
    @inlinable public static var taskResult: FrameKind { FrameKind(rawValue: 34) }
    /// A shared-memory request (`context.memory`): the asking run's token (8 bytes, 0 for a
    /// process), then a memory command as JSON (see `agent_host_api.memory`).
    @inlinable public static var memory: FrameKind { FrameKind(rawValue: 35) }
    /// A `jsonl/1` program wrote a line its worker refused (empty body; counted, see
    /// `ProtocolProblems`).
    @inlinable public static var lineRefused: FrameKind { FrameKind(rawValue: 36) }
    /// The chatbot's language-model adapter asks for its tools or calls one, for a message still
    /// waiting for its answer: id (8), then JSON `{"message", "describe": [names]}` or
    /// `{"message", "call": {"name", "arguments"}}` (answered by ``chatToolResult``).
    @inlinable public static var chatTool: FrameKind { FrameKind(rawValue: 37) }

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
        case .deliverRun: "deliver-run"
        case .onSocket: "on-socket"
        case .taskRun: "task-run"
        case .taskCancel: "task-cancel"
        case .taskProgress: "task-progress"
        case .taskHeartbeat: "task-heartbeat"
        case .taskResult: "task-result"
        case .memory: "memory"
        case .lineRefused: "line-refused"
        case .memoryResult: "memory-result"
        case .chatTool: "chat-tool"
        case .chatToolResult: "chat-tool-result"
        default: "kind \(rawValue)"
        }
    }
}
