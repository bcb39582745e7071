import AgentBase
import AgentCommands
import AgentCore
import Foundation
import JSONSchema

extension AgentDaemon {
    /// `agent-control logs NAME`: prints a process's kept lines (`TIME STREAM TEXT`, or JSON
    /// lines), then with `follow` asks for the lines after the last one every 200 ms until
    /// interrupted. Exit status 3 when the agent is not running, 1 for a process it does not
    /// have (or another refusal). While following, a request that fails for a moment (no answer
    /// in time, the connection lost, refused at the socket's connection limit) is tried again
    /// for up to a minute, each failure said on stderr: a loaded agent does not end the follow.
    public func logs(name: String, lines: Int?, since: String?, follow: Bool, json: Bool) -> Int32 {
        var request = LogsCommand.request(.init(name: name, lines: lines, since: since.map(TimeSince.text)))
        var next: Int?
        var retries = FollowRetries()
        while true {
            let answer: JSONValue
            do {
                answer = try ControlClient.send(request, paths: paths)
            } catch {
                // The agent stopped while followed: the end of its log, not a failure.
                if next != nil, error.isNotRunning {
                    FileHandle.standardError.write(Data("(the agent stopped: \(error))\n".utf8))
                    return AgentLauncher.ExitCode.success
                }
                if next != nil, retries.again(after: error.description) { continue }
                return Self.fail(error)
            }
            guard answer["ok"] == true else {
                let message = answer["error"]?.stringValue ?? "the agent refused the request"
                // A refusal without a code is the socket's (its connection limit, no descriptor
                // left), not the command's: it passes.
                if next != nil, answer["code"] == nil, retries.again(after: message) { continue }
                return Self.fail(message)
            }
            retries.succeeded()
            for line in answer["lines"]?.arrayValue ?? [] {
                print(json ? line.serialized() : Self.logLine(line))
            }
            fflush(nil)
            guard follow else { return AgentLauncher.ExitCode.success }
            next = answer["next"]?.numberValue?.intValue ?? next
            // From now on, only what comes after; every line of it (no count, no time).
            request = LogsCommand.request(.init(name: name, after: next ?? 0))
            usleep(200_000)
        }
    }

    /// `2026-11-24T02:10:00.123Z stderr hello`; a replica's line (`logs NAME` of a process with
    /// replicas) names it: `2026-11-24T02:10:00.123Z NAME#2 stderr hello`. What a module wrote
    /// is shown with its controls escaped (`\u{1B}`): an escape sequence in it would otherwise
    /// retitle or clear the reader's terminal.
    static func logLine(_ line: JSONValue) -> String {
        let replica = line["process"]?.stringValue.map { $0 + " " } ?? ""
        return TerminalText.shown("\(line["time"]?.stringValue ?? "?") \(replica)\(line["stream"]?.stringValue ?? "?") \(line["text"]?.stringValue ?? "")",
                                  keepingLines: false)
    }
}
