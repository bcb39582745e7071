import AgentBase
import AgentLoop
import AgentStore
import Foundation
import JSONSchema

/// What the store reads run on: where the store is, and the loop their answers go back to.
package protocol StoreReadHost: AnyObject {
    /// The store's file (nil: the store is off).
    var storePath: String? { get }
    var inbox: LoopInbox { get }
    /// Runs `done` (any thread) once the writes queued so far are committed: a read after it
    /// sees them (a chat's answer comes before its lines are committed).
    func whenWritten(_ done: @escaping @Sendable () -> Void)
}

/// A command that reads the store (`events`, `history`, `chat_history`): answered from a
/// read-only connection off the supervisor's loop (a read may take a while), its answer
/// encoded there too (``StoreRead``) — on a task of its own over the control socket, on the
/// caller's thread for the HTTP front (see ``CommandCenter``) — with the reader
/// `agent-control events` and `history` use when the agent is not running.
package protocol StoreReadCommand: AgentCommand where Host == any StoreReadHost, Answer: Sendable {
    /// Reads the answer (blocks).
    static func read(_ request: Request, from reader: StoreReader) throws -> Answer
    /// The request as `caller` may make it (a non-admin's chat read limited to their own
    /// lines), or why they may not; on every front, before the read.
    static func scoped(_ request: Request, caller: CommandCaller) -> Result<Request, CommandError>
}

extension StoreReadCommand {
    package static var mutating: Bool { false }

    /// Any caller reads as they ask.
    package static func scoped(_ request: Request, caller: CommandCaller) -> Result<Request, CommandError> { .success(request) }

    /// On the loop, as every command's `run` (conformers are `@preconcurrency`, see ``AgentCommand``).
    @LoopActor package static func run(_ request: Request, on host: any StoreReadHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        let storePath = host.storePath
        let inbox = host.inbox
        let reply = LoopOwned(respond)
        BlockingPool.storeReads.submit {
            let result = answer(request, storePath: storePath)
            inbox.post { reply.value(result) }
        }
    }

    /// The answer, read on the caller's thread.
    package static func answer(_ request: Request, storePath: String?) -> Result<Answer, CommandError> {
        guard let storePath else {
            return .failure(.unavailable("the store is off (\"store\": {\"enabled\": false}), so \(name) has nothing to read"))
        }
        do {
            return .success(try read(request, from: try StoreReader(path: storePath)))
        } catch let refusal as CommandError {
            return .failure(refusal)
        } catch {
            return .failure(.unavailable("\(error)"))
        }
    }
}
