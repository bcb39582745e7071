import AgentControlCLI
import CAgentControl

// Before anything reads the environment or starts a thread: SWIFT_BACKTRACE as it was given
// (backtrace_helper.c named the helper for this process's runtime only).
agent_control_restore_environment()
// The command tree lives in AgentControlCLI, so that the tests import it without linking this
// executable's settings (the Swift runtime and Foundation linked statically: Package.swift).
AgentControl.main()
