import AgentBase
import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import JSONSchema

/// The client end: sends one request and waits for its response.
public enum ControlClient {
    /// The largest request the agent reads (one line of JSON); a longer one is refused. A run's
    /// input may be 1 MiB, and the request around it needs room too: at exactly 1 MiB, the CLI
    /// refused inputs the docs and HTTP accept, saying the request, not the input, was too long.
    public static let maximumRequestBytes = (1 << 20) + (64 << 10)

    /// Sends `request` to the agent whose run directory is in `paths`. Lines `{"partial": …}`
    /// before the answer (a chat asked with `"stream": true`) go to `partial` as they come.
    public static func send(_ request: JSONValue, paths: AgentPaths, timeout: Double = 30,
                            partial: ((JSONValue) -> Void)? = nil) throws(ControlError) -> JSONValue {
        let directoryFD = agent_open_directory(paths.runDirectory)
        guard directoryFD >= 0 else { throw ControlError("the agent is not running (no run directory \(paths.runDirectory))", isNotRunning: true) }
        defer { close(directoryFD) }
        // Before the connect too: a stopped agent's listen backlog fills, and a connect blocks.
        if let error = stoppedError(paths) { throw error }
        let fd = connect(directoryFD, paths, within: min(timeout, 10))
        guard fd >= 0 else {
            let code = errno
            if code == EAGAIN { throw fullQueue(paths) }
            let absent = code == ENOENT || code == ECONNREFUSED
            let reason = absent ? "nothing listens on \(paths.socketPath)" : String(cString: strerror(code))
            throw ControlError("the agent is not running (\(reason))", isNotRunning: absent)
        }
        defer { close(fd) }
        var bytes = request.serializedBytes()
        guard bytes.count <= maximumRequestBytes else {
            throw ControlError("the request is \(bytes.count) bytes; the control socket takes requests of at most \(maximumRequestBytes) bytes (1 MiB and 64 KiB)")
        }
        bytes.append(10)
        // Before the request is written: a stopped agent would do it once resumed, after its
        // client had said it failed (a `stop` that said "stopped" stopped it at its SIGCONT).
        // The listener's pid from the kernel: the pidfile may be gone, or name another agent.
        let listener = agent_peer_pid(fd)
        let agent = listener > 0 ? Int32(clamping: listener) : nil
        if let error = stoppedError(paths, pid: agent) { throw error }
        ControlServer.writeAll(fd, bytes)
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let deadline = EventLoop.now() + timeout
        var nextStopCheck = EventLoop.now() + 1
        // Seen stopped at consecutive checks: a moment's stop (ctrl-Z then `fg`) is waited out.
        var seenStopped = 0
        // Where the search for the answer's newline goes on: each chunk is searched once (from
        // the start every time, a 13 MB answer took the client 28 s of CPU).
        var searched = 0
        while true {
            while let end = response.firstIndex(of: 10, from: searched) {
                let line = try parse(response[..<end])
                response.removeSubrange(...end)
                searched = 0
                // A piece of a streamed answer (a chat asked with "stream") is never the answer:
                // given to the handler, or passed over by a caller that wants the answer whole.
                guard line["partial"] != nil, line["ok"] == nil else { return line }
                partial?(line)
            }
            let now = EventLoop.now()
            let remaining = deadline - now
            guard remaining > 0 else { throw ControlError("the agent did not answer within \(timeout.compactText) s") }
            // A supervisor stopped by SIGSTOP (or ctrl-Z) holds its socket open and never
            // answers: `status` and `stop` waited their whole timeout without saying why.
            if now >= nextStopCheck {
                nextStopCheck = now + 1
                if var error = stoppedError(paths, pid: agent) {
                    seenStopped += 1
                    if seenStopped >= 3 {
                        error.description += "; what was asked waits on its socket and is done once it is resumed"
                        throw error
                    }
                } else {
                    seenStopped = 0
                }
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Saturating.pollTimeout(min(remaining, nextStopCheck - now))) <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            searched = response.count
            guard n > 0 else {
                // Killed or stopped while it answered: "not valid JSON … end of input" said
                // nothing of that, and a script retrying it queued the same run twice.
                guard !response.isEmpty else {
                    throw ControlError("the agent closed the connection without answering: it stopped or was killed meanwhile (`agent-control status` and its log say which); what was asked may have been done before — a run, for instance, may be queued already (`agent-control task runs`)")
                }
                return try parse(response[...])
            }
            response.append(contentsOf: chunk[0..<n])
        }
    }

    /// The error for an agent whose process (`pid`, else the pidfile's) is stopped by a signal
    /// (state T in /proc; not a tracer's passing stop, t), nil otherwise.
    static func stoppedError(_ paths: AgentPaths, pid: Int32? = nil) -> ControlError? {
        guard let pid = pid ?? Pidfile.holder(of: paths.pidfile), ProcStat.read(pid)?.state == "T" else { return nil }
        return ControlError("the agent (pid \(pid)) is stopped (a SIGSTOP, or ctrl-Z in its terminal) and answers nothing until it is resumed: `kill -CONT \(pid)` resumes it")
    }

    private static func fullQueue(_ paths: AgentPaths) -> ControlError {
        ControlError("the agent's control socket \(paths.socketPath) takes no connection: its queue is full, so the agent is stopped (SIGSTOP: `kill -CONT` its pid resumes it) or does not keep up; nothing was sent")
    }

    /// A connection to the control socket; while the listener's queue is full (EAGAIN), tried
    /// again for `seconds`. -1 with errno otherwise.
    private static func connect(_ directoryFD: Int32, _ paths: AgentPaths, within seconds: Double) -> Int32 {
        let deadline = EventLoop.now() + seconds
        while true {
            let fd = agent_unix_socket(directoryFD, paths.socketName, 0)
            guard fd < 0, errno == EAGAIN, EventLoop.now() < deadline else { return fd }
            usleep(20_000)
        }
    }

    /// The pid of the process listening on the control socket (the kernel's word, in this pid
    /// namespace), nil when nothing listens; throws when its queue stays full. Nothing is sent.
    static func listenerPID(_ paths: AgentPaths) throws(ControlError) -> Int32? {
        let directoryFD = agent_open_directory(paths.runDirectory)
        guard directoryFD >= 0 else { return nil }
        defer { close(directoryFD) }
        let fd = connect(directoryFD, paths, within: 2)
        if fd < 0, errno == EAGAIN { throw fullQueue(paths) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let pid = agent_peer_pid(fd)
        return pid > 0 ? Int32(clamping: pid) : nil
    }

    private static func parse(_ line: ArraySlice<UInt8>) throws(ControlError) -> JSONValue {
        do {
            return try JSONValue.parse(line)
        } catch {
            throw ControlError("the agent's answer is not valid JSON: \(error)")
        }
    }
}
