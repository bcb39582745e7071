import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import JSONSchema
import Logging

/// The supervisor's end of the control socket: newline-delimited JSON requests and
/// responses, one request per connection, served on the supervisor's event loop.
///
/// Nothing a client does can take the loop or the supervisor's descriptors: connections are
/// bounded in number and idle time (see ``ControlLimits``), requests in size (see
/// ``ControlRequestReader``); answers are written
/// without blocking, what the client has not taken yet kept per connection; and when accept
/// finds no descriptor left, a reserve descriptor is given up to take the waiting connection
/// and close it, so that the level-triggered listening socket never spins.
@LoopActor
final class ControlServer {
    let paths: AgentPaths
    let limits: ControlLimits
    private let listenFD: Int32
    private let directoryFD: Int32
    private var connections: [Int32: Connection] = [:]
    private let loop: EventLoop
    /// Names the peers' users off the loop.
    private let peers: SocketPeer
    private let logger: Logger
    private let handle: (Result<CheckedRequest, CommandError>, _ peer: String?, _ partial: @escaping (JSONValue) -> Void, _ respond: @escaping (JSONValue) -> Void) -> Void
    /// Given up when accept fails for lack of descriptors (see ``acceptWithoutDescriptors()``).
    private var reserveFD: Int32 = -1
    private var sweepTimer: Int?
    private var listening = false
    /// Refusals since the last log line about them, and when that line was written.
    private var refusedSinceLog = 0
    private var lastRefusalLog = -Double.infinity
    /// Read into on the loop; `nonisolated(unsafe)` only so that the (nonisolated) deinit frees it.
    private nonisolated(unsafe) let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)

    /// One client: its request as it arrives, then its answer as the client takes it.
    private final class Connection {
        let fd: Int32
        var reader = ControlRequestReader()
        var output: [UInt8] = []
        var written = 0
        /// The request was read; the answer is being made (it may take a while: a chat).
        var answering = false
        /// The answer's line is in `output`: the connection closes once it is written.
        var complete = false
        /// The answer was given (its line may still be being made off the loop): no partial
        /// line after it.
        var answered = false
        /// The descriptor is watched for room to write (what the client has not taken yet).
        var watchingWrites = false
        var lastActivity = EventLoop.now()
        init(fd: Int32) { self.fd = fd }
    }

    /// Binds the socket (replacing a stale one) and starts accepting. `handle` answers each
    /// request (checked against the registry, or refused) through its last argument, at once or
    /// later (a chat waits for the chatbot).
    init(paths: AgentPaths, loop: EventLoop, limits: ControlLimits = ControlLimits(), logger: Logger, peers: SocketPeer? = nil,
         handle: @escaping (Result<CheckedRequest, CommandError>, _ peer: String?, _ partial: @escaping (JSONValue) -> Void, _ respond: @escaping (JSONValue) -> Void) -> Void) throws {
        self.paths = paths
        self.loop = loop
        self.limits = limits
        self.logger = logger
        self.handle = handle
        self.peers = peers ?? SocketPeer(loop: loop)
        directoryFD = agent_open_directory(paths.runDirectory)
        guard directoryFD >= 0 else {
            chunk.deallocate()
            throw ControlError("cannot open the run directory \(paths.runDirectory): \(String(cString: strerror(errno)))")
        }
        // A socket file left by an agent that died: nobody answers it, so it is stale. The
        // pidfile lock already proved no live agent uses this run directory.
        unlinkat(directoryFD, paths.socketName, 0)
        listenFD = agent_unix_socket(directoryFD, paths.socketName, 1)
        guard listenFD >= 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(directoryFD)
            chunk.deallocate()
            throw ControlError("cannot listen on \(paths.socketPath): \(reason)")
        }
        _ = fcntl(listenFD, F_SETFL, fcntl(listenFD, F_GETFL) | O_NONBLOCK)
        reserveFD = Self.openReserve()
        startListening()
    }

    deinit { chunk.deallocate() }

    /// Stops listening and removes the socket file.
    func close() {
        stopListening()
        Glibc.close(listenFD)
        unlinkat(directoryFD, paths.socketName, 0)
        Glibc.close(directoryFD)
        for fd in Array(connections.keys) { finish(fd) }
        if reserveFD >= 0 { Glibc.close(reserveFD) }
        reserveFD = -1
        if let sweepTimer { loop.cancel(sweepTimer) }
        sweepTimer = nil
    }

    /// Open connections (for status and tests).
    var connectionCount: Int { connections.count }

    private static func openReserve() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    private func startListening() {
        guard !listening else { return }
        listening = true
        loop.register(listenFD) { [unowned self] _ in acceptAll() }
    }

    private func stopListening() {
        guard listening else { return }
        listening = false
        loop.unregister(listenFD)
    }

    // MARK: Accepting

    /// Takes every waiting connection: each is served, refused (over the limit) or, without a
    /// descriptor for it, taken with the reserve and closed. The socket is empty afterwards, or
    /// no longer watched for a moment, so that its readiness cannot wake the loop in vain.
    private func acceptAll() {
        while true {
            let fd = agent_accept(listenFD)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE:
                    if acceptWithoutDescriptors(errno) { continue }
                    return pauseAccepting()
                case EAGAIN: return
                default:
                    logger.error("control socket: accept failed: \(String(cString: strerror(errno)))")
                    return pauseAccepting()
                }
            }
            if connections.count >= limits.maximumConnections {
                refuse(fd, "the agent has \(limits.maximumConnections) control connections open, its limit; try again when fewer clients are connected")
                noteRefusal("\(limits.maximumConnections) control connections are open (the limit)")
                continue
            }
            let connection = Connection(fd: fd)
            connections[fd] = connection
            loop.register(fd) { [unowned self] _ in readRequest(connection) }
            scheduleSweep()
        }
    }

    /// Out of descriptors: closes the reserve, takes the waiting connection with it, tells
    /// the client why and closes it, then takes the reserve again. False when there is no
    /// reserve (it could not be taken again: every descriptor is in use).
    private func acceptWithoutDescriptors(_ code: Int32) -> Bool {
        guard reserveFD >= 0 else { return false }
        Glibc.close(reserveFD)
        reserveFD = -1
        let fd = agent_accept(listenFD)
        if fd >= 0 {
            refuse(fd, "the agent is out of file descriptors; try again later")
        }
        reserveFD = Self.openReserve()
        noteRefusal("out of file descriptors (\(String(cString: strerror(code))))")
        return fd >= 0 && reserveFD >= 0
    }

    /// Stops watching the socket for a moment (connections wait in its backlog).
    private func pauseAccepting() {
        guard listening else { return }
        stopListening()
        noteRefusal("cannot accept connections now")
        loop.schedule(after: 0.25) { [weak self] in
            guard let self else { return }
            if reserveFD < 0 { reserveFD = Self.openReserve() }
            startListening()
        }
    }

    /// Answers a connection that is not served with one error line (if the socket takes it at
    /// once) and closes it.
    private func refuse(_ fd: Int32, _ message: String) {
        var bytes = JSONValue.object(["ok": false, "error": .string(message)]).serializedBytes()
        bytes.append(10)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.close(fd)
    }

    /// Logs refused connections at most once per 10 s, with how many there were.
    private func noteRefusal(_ why: String) {
        refusedSinceLog += 1
        let now = EventLoop.now()
        guard now - lastRefusalLog >= 10 else { return }
        logger.warning("control socket: \(why); refused \(refusedSinceLog) connection(s)\(lastRefusalLog.isFinite ? " since the last such line" : "")")
        lastRefusalLog = now
        refusedSinceLog = 0
    }

    // MARK: Requests

    private func readRequest(_ connection: Connection) {
        let fd = connection.fd
        while true {
            let n = read(fd, chunk.baseAddress, chunk.count)
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN { return }
            if n <= 0 { return finish(fd) }
            // lastActivity stays the connection's start: the whole request must arrive within
            // idle_timeout, so a client trickling a byte at a time cannot hold its slot.
            let response: JSONValue
            switch connection.reader.append(UnsafeRawBufferPointer(rebasing: chunk[0..<n])) {
            case .incomplete:
                continue
            case .line(let line):
                // No more reading: the answer may come later.
                connection.answering = true
                loop.unregister(fd)
                check(line, of: connection)
                return
            case .refused(let refusal):
                response = refusal.json
            }
            connection.answering = true
            loop.unregister(fd)
            return answer(connection, response)
        }
    }

    /// Request lines this long or longer are read and checked, and answers made into text, off
    /// the loop: a request of 1 MiB (a run's input) held it ~40 ms.
    static let checkedOffLoopFrom = 64 << 10
    nonisolated static let checks = BlockingPool(name: "agent-control-check", width: 1)

    /// Reads and checks a request line (off the loop when it is long), then hands it on with
    /// its peer's name; a line that is not JSON is answered without the name.
    private func check(_ line: [UInt8], of connection: Connection) {
        let fd = connection.fd
        let proceed = { [weak self] (checked: Result<Result<CheckedRequest, CommandError>, CommandError>) in
            guard let self, connections[fd] === connection else { return }
            switch checked {
            case .failure(let notJSON): answer(connection, notJSON.json)
            case .success(let request):
                // The peer's name may need the user database: looked up off the loop.
                peers.userName(of: fd) { [weak self] peer in
                    guard let self, connections[fd] === connection else { return }
                    handle(request, peer, { [weak self] piece in self?.partial(connection, piece) }, { [weak self] response in self?.answer(connection, response) })
                }
            }
        }
        guard line.count >= Self.checkedOffLoopFrom else { return proceed(Self.checked(line)) }
        let owned = LoopOwned(proceed)
        let inbox = loop.inbox
        Self.checks.submit {
            let checked = Self.checked(line)
            inbox.post { owned.value(checked) }
        }
    }

    /// The request a line holds checked against the registry (as an HTTP request is: its
    /// refusal is the request's answer), or why the line is not JSON.
    nonisolated static func checked(_ line: [UInt8]) -> Result<Result<CheckedRequest, CommandError>, CommandError> {
        ControlRequestReader.request(line).map { CommandRegistry.standard.check($0) }
    }

    // MARK: Answers

    /// The most bytes of partial lines waiting for a slow client: more are dropped (the answer's
    /// line still comes whole).
    static let maximumPartialBacklog = 256 << 10

    /// A line before the answer (a piece of a chat answer), when the client keeps up.
    private func partial(_ connection: Connection, _ piece: JSONValue) {
        guard connections[connection.fd] === connection, !connection.answered,
              connection.output.count - connection.written < Self.maximumPartialBacklog else { return }
        var bytes = piece.serializedBytes()
        bytes.append(10)
        enqueue(connection, bytes)
    }

    /// Writes the answer's line after any partial ones; the connection closes once it is out.
    private func answer(_ connection: Connection, _ response: JSONValue) {
        // The connection may have been closed meanwhile (and its number reused).
        guard connections[connection.fd] === connection, !connection.answered else { return }
        // No partial line after the answer; still answering (not idle, not closed once the
        // partial lines are out) until its line is made.
        connection.answered = true
        let limit = limits.maximumAnswerBytes
        // A long answer (a run's output of a MiB) is made as text off the loop.
        guard response.serializedLength(atMost: Self.checkedOffLoopFrom) == nil else {
            return complete(connection, Self.line(response, limit: limit))
        }
        let fd = connection.fd
        let write = LoopOwned({ [weak self] (bytes: [UInt8]) in
            guard let self, connections[fd] === connection else { return }
            complete(connection, bytes)
        })
        let inbox = loop.inbox
        Self.checks.submit {
            let bytes = Self.line(response, limit: limit)
            inbox.post { write.value(bytes) }
        }
    }

    /// Queues the answer's line: the connection closes once it is written.
    private func complete(_ connection: Connection, _ line: [UInt8]) {
        connection.answering = false
        connection.complete = true
        enqueue(connection, line)
    }

    /// The answer's line, or a refusal when it is longer than `limit`.
    nonisolated static func line(_ response: JSONValue, limit: Int) -> [UInt8] {
        var bytes = response.serializedBytes()
        if bytes.count > limit {
            bytes = JSONValue.object(["ok": false, "error": .string(
                "the answer is \(bytes.count) bytes, more than the control socket's limit of \(limit); ask for less (a smaller limit)")]).serializedBytes()
        }
        bytes.append(10)
        return bytes
    }

    /// Writes what the socket takes now; the rest goes out as the client reads it.
    private func enqueue(_ connection: Connection, _ bytes: [UInt8]) {
        if connection.written == connection.output.count {
            connection.output.removeAll(keepingCapacity: true)
            connection.written = 0
        }
        connection.output += bytes
        connection.lastActivity = EventLoop.now()
        writeAnswer(connection)
        if connections[connection.fd] === connection, connection.written < connection.output.count, !connection.watchingWrites {
            connection.watchingWrites = true
            loop.register(connection.fd, events: EventLoop.writable) { [unowned self] _ in writeAnswer(connection) }
            scheduleSweep()
        }
    }

    private func writeAnswer(_ connection: Connection) {
        let fd = connection.fd
        while connection.written < connection.output.count {
            let n = connection.output.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + connection.written, raw.count - connection.written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n > 0 {
                connection.written += n
                connection.lastActivity = EventLoop.now()
                continue
            }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN { return }
            // The client went away: nothing more to write to it.
            return finish(fd)
        }
        if connection.complete { return finish(fd) }
        // Everything before the answer is out: wait for more without watching for room.
        if connection.watchingWrites {
            connection.watchingWrites = false
            loop.unregister(fd)
        }
    }

    private func finish(_ fd: Int32) {
        guard connections.removeValue(forKey: fd) != nil else { return }
        loop.unregister(fd)
        Glibc.close(fd)
    }

    // MARK: Idle connections

    /// Checks for idle connections once a second while there are connections.
    private func scheduleSweep() {
        guard sweepTimer == nil, !connections.isEmpty else { return }
        sweepTimer = loop.schedule(after: min(1, limits.idleTimeout / 2)) { [weak self] in
            guard let self else { return }
            sweepTimer = nil
            closeIdleConnections()
            scheduleSweep()
        }
    }

    private func closeIdleConnections() {
        let cutoff = EventLoop.now() - limits.idleTimeout
        let idle = connections.values.filter { !$0.answering && $0.lastActivity < cutoff }
        for connection in idle { finish(connection.fd) }
        if !idle.isEmpty {
            logger.debug("control socket: closed \(idle.count) connection(s) idle for \(ProcessPolicy.format(limits.idleTimeout)) s")
        }
    }

    /// Sends all of `bytes`, waiting for the socket for at most a second (the client's side).
    nonisolated static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        let deadline = EventLoop.now() + 1
        bytes.withUnsafeBytes { raw in
            while offset < raw.count, EventLoop.now() < deadline {
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n > 0 { offset += n; continue }
                if n < 0, errno == EINTR || errno == EAGAIN {
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, 100)
                    continue
                }
                return
            }
        }
    }
}
