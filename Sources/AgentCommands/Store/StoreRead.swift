import AgentBase
import AgentLoop
import JSONSchema

/// How the registry runs a store read (``StoreReadCommand``: `events`, `history`,
/// `chat_history`): read and encoded off the loop, so that a big answer (a chat history of
/// megabytes) never holds it — only the encoded answer comes back to the loop (the control
/// socket's), and an HTTP request is read and encoded on the caller's side (``CommandCenter``).
enum StoreRead<C: StoreReadCommand> {
    /// Reads and encodes on a thread of the store reads' pool, then answers on the loop.
    @LoopActor static func invoke(_ request: C.Request, hosts: any CommandHosts, respond: @escaping (JSONValue) -> Void) {
        guard C.answersWhileStopping || !hosts.isStopping else { return respond(CommandError.stopping.json) }
        guard let host = hosts.host(C.Host.self) else { return respond(C.unavailable.json) }
        // The store off: refused at once, nothing to read.
        guard let storePath = host.storePath else { return respond(encoded(request, storePath: nil)) }
        let inbox = host.inbox
        let reply = LoopOwned(respond)
        // After the writes queued before it: a history read right after a chat's answer has it.
        host.whenWritten {
            BlockingPool.storeReads.submit {
                let answer = encoded(request, storePath: storePath)
                inbox.post { reply.value(answer) }
            }
        }
    }

    /// The answer, read and encoded on the caller's thread (blocks).
    static func encoded(_ request: C.Request, storePath: String?) -> JSONValue {
        switch C.answer(request, storePath: storePath) {
        case .success(let answer):
            do {
                return try JSONValueEncoder().encode(answer)
            } catch {
                return CommandError(.failed, "the answer of \(C.name) could not be encoded: \(error)").json
            }
        case .failure(let refusal):
            return refusal.json
        }
    }
}
