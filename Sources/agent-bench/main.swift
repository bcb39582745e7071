import Foundation

// A child mode (`agent-bench --child …`) runs and exits here; otherwise the command line is parsed.
ChildMode.runIfRequested(CommandLine.arguments)
AgentBench.main()
