@testable import AgentRuntime
import AgentCore
import AgentSupervision
import AgentTestSupport
import JSONSchema
import Testing

/// docs/reference/settings.md is what the host's schema and the shipped modules' schemas
/// generate, and every key they declare has a description.
@Suite(.ownThreads) struct SettingsReferenceTests {
    /// The shipped modules as the built libraries describe themselves (real describe workers).
    static func shippedManifests() throws -> [ModuleManifest] {
        try SettingsReference.describeShippedModules(in: TestPaths.products, worker: TestPaths.products + "/agent-worker")
    }

    @Test func theCheckedInSettingsReferenceIsWhatTheSchemasGenerate() throws {
        let manifests = try Self.shippedManifests()
        #expect(manifests.map(\.name) == SettingsReference.shippedModules)
        CheckedInReference.expectCurrent(SettingsReference.markdown(modules: manifests), "settings.md")
    }

    @Test func everySettingsKeyHasADescription() throws {
        let missing = SettingsReference.undocumentedKeys(modules: try Self.shippedManifests())
        #expect(missing.isEmpty, "keys without a \"description\" in their schema: \(missing.joined(separator: ", "))")
    }

    /// The example the reference gives for each host key is a value its own schema accepts.
    @Test func everyHostKeysExampleIsValidForTheKey() throws {
        var refused: [String] = []
        for key in SettingsReference.hostSections().flatMap(\.keys) {
            var schema = key.schema.objectValue ?? [:]
            schema["$defs"] = HostSchema.document["$defs"]
            let validator = try JSONSchemaValidator(schema: .object(schema))
            if !validator.validate(key.example).isEmpty { refused.append("\(key.path): \(key.example.serialized())") }
        }
        #expect(refused.isEmpty, "examples their key refuses: \(refused.joined(separator: "; "))")
    }
}
