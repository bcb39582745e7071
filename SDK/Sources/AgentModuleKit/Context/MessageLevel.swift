import AgentModuleABI

/// How important a message or a log line is.
public struct MessageLevel: Hashable, Sendable, Comparable {
    let rawValue: Int32

    /// Detail for whoever debugs the module; not shown by default.
    public static let debug = MessageLevel(rawValue: Int32(AGENT_LOG_DEBUG))
    /// Ordinary news: what the process did.
    public static let info = MessageLevel(rawValue: Int32(AGENT_LOG_INFO))
    /// Something needs attention, but the process goes on.
    public static let warning = MessageLevel(rawValue: Int32(AGENT_LOG_WARNING))
    /// Something failed.
    public static let error = MessageLevel(rawValue: Int32(AGENT_LOG_ERROR))
    /// Something failed that needs a person now.
    public static let critical = MessageLevel(rawValue: Int32(AGENT_LOG_CRITICAL))

    public static func < (lhs: MessageLevel, rhs: MessageLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
