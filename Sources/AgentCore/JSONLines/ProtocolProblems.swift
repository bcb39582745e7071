import Foundation
import Synchronization

/// The lines a program wrote that the runtime refused (not JSON, not a frame, too long, a
/// frame in the wrong direction): each is counted, and logged at a bounded rate — at most one
/// line a second, the next one saying how many were not logged — so that a program writing
/// garbage as fast as it can neither floods the log nor slows the worker. Never fatal.
final class ProtocolProblems: Sendable {
    private let host: WorkerHost
    private struct State {
        var count = 0
        var unlogged = 0
        var lastLogged: UInt64 = 0
    }
    private let state = Mutex(State())
    /// The shortest time between two logged refusals (nanoseconds).
    static let logSpacing: UInt64 = 1_000_000_000

    init(host: WorkerHost) { self.host = host }

    /// Every refusal so far.
    var count: Int { state.withLock { $0.count } }

    func refused(_ error: JSONLinesError) {
        let now = DispatchTime.now().uptimeNanoseconds
        let unlogged: Int? = state.withLock { state in
            state.count += 1
            guard state.lastLogged == 0 || now &- state.lastLogged >= Self.logSpacing else {
                state.unlogged += 1
                return nil
            }
            defer { state.unlogged = 0 }
            state.lastLogged = now
            return state.unlogged
        }
        host.channel.send(.lineRefused, body: EmptyCollection())
        guard let unlogged else { return }
        var text = "refused a line of the program (\(error.code)): \(error)"
        if unlogged > 0 { text += " (and \(unlogged) more refused since the last one logged)" }
        host.sendText(.log, level: JSONLinesFrame.Message.Level.warning.number, text)
    }
}
