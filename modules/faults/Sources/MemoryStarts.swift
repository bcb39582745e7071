import AgentModuleKit

/// Counts its starts in shared memory (`context.memory`): at each start it adds one to the
/// integer key `starts/<process name>` by compare-and-set and logs the count, to test memory
/// from a process (not a task handler).
struct MemoryStarts: Monitor {
    static let typeName = "memory_starts"
    static let description = "Adds one to the shared-memory key starts/<name> at each start (tests context.memory in a process)."
    static let subscribes: [String] = []

    struct Settings: SettingsDeclaration {}

    init(settings: Settings) {}

    func run(context: ProcessContext) async throws {
        let key = "starts/\(context.processName)"
        while true {
            let current = try context.memory.entry(key)
            let count = try current?.decode(Int.self) ?? 0
            do {
                try context.memory.set(key, count + 1, expectedVersion: current?.version ?? 0)
                context.log("memory starts \(count + 1)")
                break
            } catch let error as ProcessContextError where error.code == .memoryConflict {
                continue
            }
        }
        for await _ in context.events {}
    }
}
