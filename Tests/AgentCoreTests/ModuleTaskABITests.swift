import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentCore

/// The task kind of module ABI 2, with real libraries built from C: old modules refused and task
/// declarations checked (a C task handler run in a real executor worker:
/// `ModuleTaskRunnerTests`).
@Suite(.ownThreads) struct ModuleTaskABITests {
    private func loadError(_ path: String) -> ModuleLoadError? {
        do {
            _ = try ModuleLoader.load(path: path, module: "old")
            return nil
        } catch {
            return error
        }
    }

    @Test func aModuleBuiltAgainstABI1IsRefusedNamingItsFileAndSayingToRebuild() throws {
        // What an ABI 1 build of a module looks like: version 1, and a struct that ends before
        // the task entry points.
        let path = try CModuleFixture.module("abi1", manifest: CModuleFixture.validManifest, abiVersion: "1",
                                             structSize: "offsetof(agent_module, task_create)")
        let error = try #require(loadError(path))
        #expect(error.code == .abiMismatch)
        #expect(error.file == path)
        #expect(error.description.contains(path))
        #expect(error.message.contains("built against module ABI 1"), "\(error)")
        #expect(error.message.contains("Rebuild it with this runtime's SDK"), "\(error)")
    }

    @Test func aTaskTypeWhoseInputSchemaDoesNotCompileIsRefusedWithItsPointer() throws {
        let manifest = #"{"name":"cmod","version":"0.1.0","processes":[{"type":"job","kind":"task","settings_schema":{"type":"object"},"input_schema":{"type":"object","properties":{"id":{"pattern":"(unclosed"}}}}]}"#
        let path = try CModuleFixture.module("badinput", manifest: manifest)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("/processes/0/input_schema/properties/id/pattern"), "\(error)")
        #expect(error.message.contains("the input schema of \"job\" does not compile"), "\(error)")
    }

    @Test func aTaskTypeWithoutTaskEntryPointsIsRefused() throws {
        let manifest = #"{"name":"cmod","version":"0.1.0","processes":[{"type":"job","kind":"task","input_schema":{"type":"object"}}]}"#
        let path = try CModuleFixture.module("notaskrun", manifest: manifest)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("declares the task type \"job\", but task_create or task_run is NULL"), "\(error)")
    }

    @Test func aTaskTypeDeclaresItsSchemasAndHeartbeatTimeoutInTheManifest() throws {
        let manifest = try ModuleManifest(json: #"{"name":"m","version":"1","processes":[{"type":"job","kind":"task","input_schema":{"type":"object","required":["a"]},"output_schema":{"type":"integer"},"heartbeat_timeout":2.5}]}"#,
                                          module: "m", file: "/x/libm.so")
        let job = try #require(manifest.processType("job"))
        #expect(job.kind == "task")
        #expect(job.inputSchema == ["type": "object", "required": ["a"]])
        #expect(job.outputSchema == ["type": "integer"])
        #expect(job.heartbeatTimeout == 2.5)
        #expect(throws: ModuleLoadError.self) {
            try ModuleManifest(json: #"{"name":"m","version":"1","processes":[{"type":"job","kind":"task","heartbeat_timeout":-1}]}"#, module: "m", file: "/x/libm.so")
        }
    }
}
