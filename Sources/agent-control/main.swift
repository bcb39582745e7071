import AgentControlCLI

// The command tree lives in AgentControlCLI, so that the tests import it without linking this
// executable's settings (the Swift runtime and Foundation linked statically: Package.swift).
AgentControl.main()
