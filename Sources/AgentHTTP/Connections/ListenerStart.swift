import Dispatch
import NIOCore
import Synchronization

/// One listener's start, as the HTTP front waits for it: the port it listens on, or the error
/// that ended the server first.
final class ListenerStart: Sendable {
    private let result = Mutex<Result<Int, any Error>?>(nil)
    private let settled = DispatchSemaphore(value: 0)

    /// The server's `onServerRunning`.
    func running(_ channel: any Channel) async { settle(.success(channel.localAddress?.port ?? 0)) }

    /// The servers ended with `error` (the first outcome stands).
    func fail(_ error: any Error) { settle(.failure(error)) }

    /// The outcome, or nil when there was none within `seconds`.
    func wait(seconds: Int) -> Result<Int, any Error>? {
        _ = settled.wait(timeout: .now() + .seconds(seconds))
        return result.withLock { $0 }
    }

    private func settle(_ outcome: Result<Int, any Error>) {
        let first = result.withLock { result in
            guard result == nil else { return false }
            result = outcome
            return true
        }
        if first { settled.signal() }
    }
}
