import AgentCore
import CAgentSystem
import Foundation
import JSONSchema

/// The supervisor's end of the control socket: newline-delimited JSON requests and
/// responses, one request per connection, served on the supervisor's event loop.
final class ControlServer {
    let paths: AgentPaths
    private let listenFD: Int32
    private let directoryFD: Int32
    private var connections: [Int32: ControlRequestReader] = [:]
    private let loop: EventLoop
    private let handle: (JSONValue, @escaping (JSONValue) -> Void) -> Void

    /// Binds the socket (replacing a stale one) and starts accepting. `handle` answers each
    /// request through its second argument, at once or later (a chat waits for the chatbot).
    init(paths: AgentPaths, loop: EventLoop, handle: @escaping (JSONValue, @escaping (JSONValue) -> Void) -> Void) throws {
        self.paths = paths
        self.loop = loop
        self.handle = handle
        directoryFD = agent_open_directory(paths.runDirectory)
        guard directoryFD >= 0 else { throw ControlError("cannot open the run directory \(paths.runDirectory): \(String(cString: strerror(errno)))") }
        // A socket file left by an agent that died: nobody answers it, so it is stale. The
        // pidfile lock already proved no live agent uses this run directory.
        unlinkat(directoryFD, paths.socketName, 0)
        listenFD = agent_unix_socket(directoryFD, paths.socketName, 1)
        guard listenFD >= 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(directoryFD)
            throw ControlError("cannot listen on \(paths.socketPath): \(reason)")
        }
        _ = fcntl(listenFD, F_SETFL, fcntl(listenFD, F_GETFL) | O_NONBLOCK)
        loop.register(listenFD) { [unowned self] _ in acceptAll() }
    }

    /// Stops listening and removes the socket file.
    func close() {
        loop.unregister(listenFD)
        Glibc.close(listenFD)
        unlinkat(directoryFD, paths.socketName, 0)
        Glibc.close(directoryFD)
        for fd in connections.keys {
            loop.unregister(fd)
            Glibc.close(fd)
        }
        connections = [:]
    }

    private func acceptAll() {
        while true {
            let fd = agent_accept(listenFD)
            guard fd >= 0 else { return }
            connections[fd] = ControlRequestReader()
            loop.register(fd) { [unowned self] _ in readRequest(fd) }
        }
    }

    private func readRequest(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN { return }
            if n <= 0 { return finish(fd) }
            switch connections[fd]?.append(chunk[0..<n]) ?? .incomplete {
            case .incomplete:
                continue
            case .request(let request):
                // No more reading: the answer may come later.
                loop.unregister(fd)
                handle(request, respond(fd))
                return
            case .invalid(let message), .tooLong(let message):
                loop.unregister(fd)
                respond(fd)(["ok": false, "error": .string(message)])
                return
            }
        }
    }

    /// Writes one answer line and closes the connection.
    private func respond(_ fd: Int32) -> (JSONValue) -> Void {
        { [weak self] response in
            var bytes = Array(response.serialized().utf8)
            bytes.append(10)
            Self.writeAll(fd, bytes)
            self?.finish(fd)
        }
    }

    private func finish(_ fd: Int32) {
        guard connections.removeValue(forKey: fd) != nil else { return }
        loop.unregister(fd)
        Glibc.close(fd)
    }

    /// Responses are small; a client that does not read them in a second is dropped.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
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

/// A control-socket failure, with what to do about it.
public struct ControlError: Error, CustomStringConvertible {
    public var description: String
    /// Nothing answers on the socket: the agent is not running (exit status 3).
    public var isNotRunning: Bool
    public init(_ description: String, isNotRunning: Bool = false) {
        self.description = description
        self.isNotRunning = isNotRunning
    }
}

/// The client end: sends one request and waits for its response.
public enum ControlClient {
    /// The largest request the agent reads (one line of JSON); a longer one is refused.
    public static let maximumRequestBytes = 1 << 20

    /// Sends `request` to the agent whose run directory is in `paths`.
    public static func send(_ request: JSONValue, paths: AgentPaths, timeout: Double = 30) throws(ControlError) -> JSONValue {
        let directoryFD = agent_open_directory(paths.runDirectory)
        guard directoryFD >= 0 else { throw ControlError("the agent is not running (no run directory \(paths.runDirectory))", isNotRunning: true) }
        defer { close(directoryFD) }
        let fd = agent_unix_socket(directoryFD, paths.socketName, 0)
        guard fd >= 0 else {
            let code = errno
            let absent = code == ENOENT || code == ECONNREFUSED
            let reason = absent ? "nothing listens on \(paths.socketPath)" : String(cString: strerror(code))
            throw ControlError("the agent is not running (\(reason))", isNotRunning: absent)
        }
        defer { close(fd) }
        var bytes = Array(request.serialized().utf8)
        guard bytes.count <= maximumRequestBytes else {
            throw ControlError("the request is \(bytes.count) bytes; the control socket takes requests of at most \(maximumRequestBytes) bytes (1 MiB)")
        }
        bytes.append(10)
        ControlServer.writeAll(fd, bytes)
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let deadline = EventLoop.now() + timeout
        while !response.contains(10) {
            let remaining = deadline - EventLoop.now()
            guard remaining > 0 else { throw ControlError("the agent did not answer within \(timeout.compactText) s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Saturating.pollTimeout(remaining)) <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            response.append(contentsOf: chunk[0..<n])
        }
        do {
            return try JSONValue.parse(response.prefix { $0 != 10 })
        } catch {
            throw ControlError("the agent's answer is not valid JSON: \(error)")
        }
    }
}
