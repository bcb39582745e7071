/// A request that can be wrong in a way its JSON Schema cannot say — the size of a member's
/// JSON text — and says so itself. The registry asks it once the request has decoded, where
/// every request is checked: on the front's thread for HTTP, before the command reaches the
/// loop.
public protocol SelfCheckingRequest {
    /// Why the request cannot be run, at its member's pointer; nil when it can.
    func problem() -> CommandError?
}
