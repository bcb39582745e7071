import Foundation
import JSONSchema

/// A task handler's runs as its bridge knows them: the supervisor names a run by a token, the
/// program by its id.
struct TaskRuns {
    /// Runs handed to the program, by id.
    var going: [String: UInt64] = [:]
    /// Runs sent ahead of their start time, not handed over yet, by id.
    var waiting: [String: UInt64] = [:]
}

extension ProgramBridge {
    /// A task frame from the supervisor (the channel's reader thread): a run is written to the
    /// program as `{"run": {"id", "input"}}` (at its start time, when it was sent ahead); a
    /// cancel as `{"cancel": {"id"}}` (a run not handed over yet ends here).
    func handleTaskFrame(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) {
        switch kind {
        case .taskRun:
            guard let frame = TaskFrame.parseRun(body) else { return }
            let id = String(decoding: frame.runID, as: UTF8.self)
            let input = frame.input.isEmpty ? JSONValue.null : ((try? JSONValue.parse(frame.input)) ?? .null)
            let wait = Double(frame.notBefore - Int64(Date().timeIntervalSince1970 * 1e9)) / 1e9
            guard frame.notBefore > 0, wait > 0 else {
                runs.withLock { $0.going[id] = frame.token }
                write(.run(JSONLinesFrame.Run(id: id, input: input)))
                return
            }
            runs.withLock { $0.waiting[id] = frame.token }
            DispatchQueue.global().asyncAfter(wallDeadline: .now() + Saturating.seconds(wait)) { [self] in
                let due = runs.withLock { runs -> Bool in
                    guard let token = runs.waiting.removeValue(forKey: id) else { return false }
                    runs.going[id] = token
                    return true
                }
                if due { write(.run(JSONLinesFrame.Run(id: id, input: input))) }
            }
        case .taskCancel:
            guard let token = TaskFrame.token(body) else { return }
            let (id, waiting) = runs.withLock { runs -> (String?, Bool) in
                if let id = runs.waiting.first(where: { $0.value == token })?.key {
                    runs.waiting[id] = nil
                    return (id, true)
                }
                return (runs.going.first(where: { $0.value == token })?.key, false)
            }
            guard let id else { return }
            if waiting {
                sendResult(token: token, succeeded: false, data: Array("cancelled before its start time".utf8))
            } else {
                write(.cancel(id: id))
            }
        default:
            break
        }
    }

    func runProgress(_ progress: JSONLinesFrame.Progress) {
        guard let token = token(of: progress.id, frame: "progress") else { return }
        let message = Array((progress.message ?? "").utf8)
        let fraction = progress.fraction.map { min(1, max(0, $0)) }
        host.channel.send { buffer in
            message.withUnsafeBytes { TaskFrame.appendProgress(token: token, fraction: fraction, message: $0, to: buffer) }
        }
    }

    /// A run's result or error: it ends (a second end of the same id is refused).
    func endRun(_ id: String, succeeded: Bool, data: [UInt8]) {
        guard let token = token(of: id, frame: succeeded ? "result" : "error", removing: true) else { return }
        sendResult(token: token, succeeded: succeeded, data: data)
    }

    private func sendResult(token: UInt64, succeeded: Bool, data: [UInt8]) {
        host.channel.send { buffer in
            data.withUnsafeBytes { TaskFrame.appendResult(token: token, succeeded: succeeded, data: $0, to: buffer) }
        }
    }

    /// A line too long to read (a result over the limit) ends the run it was for, which would
    /// otherwise wait for ever: the run its head names (the SDKs write the id before the
    /// output), or the only run going.
    func failRun(ofOverlongLine head: UnsafeRawBufferPointer, length: Int, whole: Bool) {
        let named = Self.runID(inHead: head)
        let id = runs.withLock { runs -> String? in
            if let named, runs.going[named] != nil { return named }
            return runs.going.count == 1 ? runs.going.keys.first : nil
        }
        guard let id else { return }
        let size = whole ? "a line of \(length) bytes" : "a line of more than \(length) bytes"
        let reason = "the program wrote \(size) while the run was going (its result?), more than the \(Self.lineLimit) bytes a line may have; "
            + "it was not read, and the run fails (keep a run's output under 1 MiB: write large results to a file and return its path)"
        endRun(id, succeeded: false, data: Array(reason.utf8))
    }

    /// The run id an over-long `{"result": {"id": "…", …` or `{"error": {"id": "…"` line
    /// begins with, if its head has it.
    static func runID(inHead head: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: head, as: UTF8.self)
        guard let key = text.range(of: "\"id\"") else { return nil }
        var rest = text[key.upperBound...].drop { $0 == " " || $0 == "\t" }
        guard rest.first == ":" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
        guard rest.first == "\"" else { return nil }
        let value = rest.dropFirst().prefix { $0 != "\"" && $0 != "\\" }
        return value.isEmpty ? nil : String(value)
    }

    /// A heartbeat of the program is one of every run going.
    func heartbeatRuns() {
        let tokens = runs.withLock { Array($0.going.values) }
        for token in tokens { host.channel.send { TaskFrame.append(.taskHeartbeat, token: token, to: $0) } }
    }

    /// The token of the run `id` names; a line naming no run going is refused (counted).
    private func token(of id: String, frame: String, removing: Bool = false) -> UInt64? {
        let token = runs.withLock { removing ? $0.going.removeValue(forKey: id) : $0.going[id] }
        if token == nil {
            problems.refused(JSONLinesError(.malformed, at: "/\(frame)/id", "expected the id of a run going (one a \"run\" frame gave), found \(JSONValue.string(id).serialized())"))
        }
        return token
    }
}
