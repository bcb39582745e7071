import AgentTestSupport
import Synchronization
import Testing
@testable import AgentModuleKit

/// `agent_module_warm_up`: a type's schema is read once per process, so that a zygote's
/// warm-up reads it for every worker it forks.
@Suite(.ownThreads) struct WarmUpTests {
    /// How many times `Counted.settingsSchema` was read.
    static let schemaReads = Atomic<Int>(0)

    struct Counted: Datasource {
        struct Settings: SettingsDeclaration {
            @Setting(minLength: 1, description: "Required: `{}` does not decode.") var path: String
            @Setting var interval: Double = 1
        }
        static let typeName = "counted"
        static let description = "A source that counts the reads of its schema."
        static var settingsSchema: Schema {
            WarmUpTests.schemaReads.add(1, ordering: .relaxed)
            return Settings.schema
        }
        init(settings: Settings) {}
        func run(context: ProcessContext) async throws {}
    }

    @Test func aProcessTypesSchemaIsReadOnceByTheWarmUpForEveryLaterUse() throws {
        let entry = ProcessEntry(Counted.self)
        #expect(Self.schemaReads.load(ordering: .relaxed) == 0, "made the entry without reading the schema")
        // `{}` lacks the required setting: the warm-up swallows the error.
        entry.warmUp()
        #expect(Self.schemaReads.load(ordering: .relaxed) == 1)
        _ = try entry.make(Array(#"{"path": "/a"}"#.utf8))
        _ = try entry.make(Array(#"{"path": "/b", "interval": 2}"#.utf8))
        #expect(throws: (any Error).self) { try entry.make(Array(#"{"interval": 2}"#.utf8)) }
        #expect(entry.manifestJSON().serialized().contains(#""settings_schema":"# + Counted.Settings.schema.jsonString))
        #expect(Self.schemaReads.load(ordering: .relaxed) == 1, "the schema was read again after the warm-up")
    }
}
