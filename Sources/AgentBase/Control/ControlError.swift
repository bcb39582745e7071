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
