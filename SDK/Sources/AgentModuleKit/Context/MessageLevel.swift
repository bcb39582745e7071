import AgentModuleABI

/// How important a message or a log line is.
public struct MessageLevel: Hashable, Sendable, Comparable {
    let rawValue: Int32

    public static let debug = MessageLevel(rawValue: Int32(AGENT_LOG_DEBUG))
    public static let info = MessageLevel(rawValue: Int32(AGENT_LOG_INFO))
    public static let warning = MessageLevel(rawValue: Int32(AGENT_LOG_WARNING))
    public static let error = MessageLevel(rawValue: Int32(AGENT_LOG_ERROR))
    public static let critical = MessageLevel(rawValue: Int32(AGENT_LOG_CRITICAL))

    public static func < (lhs: MessageLevel, rhs: MessageLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
