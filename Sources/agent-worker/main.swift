import AgentRuntime

WorkerMain.main(arguments: CommandLine.arguments)
