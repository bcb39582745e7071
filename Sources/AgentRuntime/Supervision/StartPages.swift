import AgentCore

/// The pages of code and constants that only the start touched (argument parsing, the
/// settings' validation, the first spawns), in agent-control's executable and in every library
/// it loaded (the Swift runtime, Foundation, ICU, SQLite, the C++ library): about half of an
/// idle supervisor's memory, given back once the start is over with ``CleanFilePages`` (which
/// the fork server and the workers run too). Only mappings whose every page is still the
/// file's are released; what the supervisor runs on is mapped again at its next touch.
package enum StartPages {
    /// Releases this process's never-written file mappings: the bytes of the mappings
    /// released, or why nothing was.
    package static func release() -> CleanFilePages.Outcome {
        CleanFilePages.release()
    }
}
