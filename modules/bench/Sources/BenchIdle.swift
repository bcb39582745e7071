import AgentModuleKit

/// Does nothing until asked to stop: the idle worker whose cost the bench measures.
struct BenchIdle: Datasource {
    struct Settings: SettingsDeclaration {}

    static let typeName = "bench_idle"
    static let description = "Does nothing: sleeps until the host asks it to stop."

    init(settings: Settings) {}

    func run(context: ProcessContext) async throws {
        while true { try await context.sleep(seconds: 3600) }
    }
}
