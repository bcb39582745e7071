import AgentControlCLI
import CAgentControl
import Glibc

// A standard descriptor the caller closed (`>&-`) is /dev/null here: else the first file this
// process opens takes its number, and what is printed goes into it (the agent's stop pipe
// taken for its stdout, once).
for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 { _ = open("/dev/null", O_RDWR) }

// Before anything reads the environment or starts a thread: SWIFT_BACKTRACE as it was given
// (backtrace_helper.c named the helper for this process's runtime only).
agent_control_restore_environment()
// The command tree lives in AgentControlCLI, so that the tests import it without linking this
// executable's settings (the Swift runtime and Foundation linked statically: Package.swift).
AgentControl.main()
