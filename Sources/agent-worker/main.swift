import AgentCore

WorkerMain.main(arguments: CommandLine.arguments)
