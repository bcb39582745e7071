import AgentTestSupport
import Foundation
import Testing
@testable import AgentCore

/// Every way a module file can be wrong, each with a real file, and the error it gets.
@Suite(.ownThreads) struct ModuleLoaderTests {
    private func loadError(_ path: String, module: String = "bad", expectedName: String? = nil) -> ModuleLoadError? {
        do {
            _ = try ModuleLoader.load(path: path, module: module, expectedName: expectedName)
            return nil
        } catch {
            return error
        }
    }

    private func write(_ bytes: [UInt8], named name: String) -> String {
        let path = CModuleFixture.directory + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// A minimal ELF header: class, byte order, type and machine.
    private func elfHeader(elfClass: UInt8 = 2, type: UInt16 = 3, machine: UInt16) -> [UInt8] {
        var bytes: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, elfClass, 1, 1, 0] + [UInt8](repeating: 0, count: 56)
        bytes[16] = UInt8(type & 0xFF); bytes[17] = UInt8(type >> 8)
        bytes[18] = UInt8(machine & 0xFF); bytes[19] = UInt8(machine >> 8)
        return bytes
    }

    @Test func missingFileNamesTheModuleAndSaysHowToBuildIt() throws {
        let error = try #require(loadError("/nonexistent/libghost.so", module: "ghost"))
        #expect(error.code == .notFound)
        #expect(error.description.contains("module \"ghost\" (/nonexistent/libghost.so)"))
        #expect(error.message.contains("swift build --product ghost"))
    }

    @Test func directoryIsNotALibrary() throws {
        let error = try #require(loadError(CModuleFixture.directory))
        #expect(error.code == .notAFile)
    }

    @Test func emptyFileIsReportedAsEmpty() throws {
        let error = try #require(loadError(write([], named: "libempty.so")))
        #expect(error.code == .notELF)
        #expect(error.message.contains("empty"))
    }

    @Test func textFileIsNotAnELFFile() throws {
        let error = try #require(loadError(write(Array("#!/bin/sh\necho hi\n".utf8), named: "libtext.so")))
        #expect(error.code == .notELF)
        #expect(error.message.contains("not an ELF shared library"))
        #expect(error.message.contains("#!/bin/sh"))
    }

    @Test func libraryForAnotherArchitectureSaysWhichOne() throws {
        let error = try #require(loadError(write(elfHeader(machine: 183), named: "libarm.so")))
        #expect(error.code == .wrongArchitecture)
        #expect(error.message.contains("built for aarch64"))
        #expect(error.message.contains("this host is x86_64"))
    }

    @Test func thirtyTwoBitLibraryIsRefused() throws {
        let error = try #require(loadError(write(elfHeader(elfClass: 1, machine: 3), named: "lib32.so")))
        #expect(error.code == .wrongArchitecture)
        #expect(error.message.contains("32-bit"))
    }

    @Test func executableIsNotASharedLibrary() throws {
        let error = try #require(loadError(write(elfHeader(type: 2, machine: 62), named: "libexec.so")))
        #expect(error.code == .notELF)
        #expect(error.message.contains("not a shared library"))
    }

    @Test func unresolvableDependencyReportsDlopensReason() throws {
        let dependency = try CModuleFixture.build("vanishing", source: "int vanishing_function(void) { return 1; }")
        let path = try CModuleFixture.build("needsvanishing", source: "extern int vanishing_function(void); int f(void) { return vanishing_function(); }",
                                            extraFlags: ["-L\((dependency as NSString).deletingLastPathComponent)", "-lvanishing"])
        try FileManager.default.removeItem(atPath: dependency)
        let error = try #require(loadError(path))
        #expect(error.code == .loadFailed)
        #expect(error.message.contains("libvanishing.so: cannot open shared object file"))
    }

    @Test func libraryWithoutTheEntrySymbolSaysWhatToExport() throws {
        let path = try CModuleFixture.build("noentry", source: "int something_else(void) { return 1; }")
        let error = try #require(loadError(path))
        #expect(error.code == .missingEntry)
        #expect(error.message.contains("agent_module_entry"))
        #expect(error.message.contains("@_cdecl"))
    }

    @Test func otherABIVersionIsRefusedWithBothVersions() throws {
        let path = try CModuleFixture.module("abi99", manifest: CModuleFixture.validManifest, abiVersion: "99")
        let error = try #require(loadError(path))
        #expect(error.code == .abiMismatch)
        #expect(error.message.contains("version 99"))
        #expect(error.message.contains("this host speaks version 2"))
    }

    @Test func structTooSmallForTheABIIsRefused() throws {
        let path = try CModuleFixture.module("small", manifest: CModuleFixture.validManifest, structSize: "8")
        let error = try #require(loadError(path))
        #expect(error.code == .abiMismatch)
        #expect(error.message.contains("struct_size is 8"))
    }

    @Test func manifestThatIsNotJSONIsRefused() throws {
        let path = try CModuleFixture.module("badjson", manifest: #"{"name": "badjson", "#)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("not valid JSON"))
    }

    @Test func nullManifestIsRefused() throws {
        let path = try CModuleFixture.module("nullmanifest", manifest: nil)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("manifest_json is NULL"))
    }

    @Test func manifestWithoutFieldsListsEveryMissingOne() throws {
        let path = try CModuleFixture.module("nofields", manifest: #"{"name":"nofields","processes":[{"type":"x","kind":"sensor"}]}"#)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("/version: missing"))
        #expect(error.message.contains("/processes/0/kind: expected one of datasource, monitor, logic_adapter, task, found \"sensor\""))
    }

    @Test func moduleEnabledUnderAnotherNameIsRefused() throws {
        let path = try CModuleFixture.module("renamed", manifest: CModuleFixture.validManifest)
        let error = try #require(loadError(path, module: "renamed", expectedName: "renamed"))
        #expect(error.code == .nameMismatch)
        #expect(error.message.contains("calls itself \"cmod\""))
    }

    @Test func validCModuleLoadsAndItsManifestIsDecoded() throws {
        let path = try CModuleFixture.module("cmod", manifest: CModuleFixture.validManifest)
        let loaded = try ModuleLoader.load(path: path, module: "cmod", expectedName: "cmod")
        #expect(loaded.manifest.name == "cmod")
        #expect(loaded.manifest.processes.map(\.type) == ["ticker"])
        #expect(loaded.manifest.processes[0].kind == "datasource")
    }

    @Test func shippedSwiftModulesLoadWithTheirProcessTypes() throws {
        let sample = try ModuleLoader.load(path: TestPaths.products + "/libsample.so", module: "sample", expectedName: "sample")
        #expect(sample.manifest.version == "1.0.0")
        #expect(sample.manifest.processes.map(\.type) == ["trade_feed", "trade_frequency", "trades_counter", "word_count"])
        #expect(sample.manifest.processType("word_count")?.kind == "task")
        #expect(sample.manifest.processType("word_count")?.inputSchema?["required"] == ["text"])
        #expect(sample.manifest.processType("trades_counter")?.kind == "logic_adapter")
        #expect(sample.manifest.processType("trades_counter")?.usageExamples.first == "how many trades in the last 5 minutes?")
        #expect(sample.manifest.processType("trade_frequency")?.subscribes == ["trade"])
        let schema = try #require(sample.manifest.processType("trade_feed")?.settingsSchema.objectValue)
        #expect(schema["additionalProperties"] == .bool(false))
        #expect(schema["properties"]?["interval"]?["default"]?.numberValue?.doubleValue == 0.5)

        let system = try ModuleLoader.load(path: TestPaths.products + "/libsystem.so", module: "system", expectedName: "system")
        #expect(system.manifest.processes.map(\.kind) == ["datasource", "monitor"])
    }

    // libbench.so is loaded in this test process by this test alone: the deferral is a flag of
    // the library's own copy of the SDK, taken by the next entry call.
    @Test func aWorkersLoadDefersTheManifestAndAFullLoadLaterGetsTheWholeOfIt() throws {
        let path = TestPaths.products + "/libbench.so"
        let deferred = try ModuleLoader.load(path: path, module: "bench", deferManifest: true)
        #expect(deferred.manifest.isPartial)
        #expect(deferred.manifest.name == "bench")
        #expect(deferred.manifest.processType("bench_source")?.kind == "datasource")
        #expect(deferred.manifest.processType("noop")?.kind == "task")
        // No type's schema was built: the partial manifest carries none.
        #expect(!deferred.manifestJSON.contains("settings_schema"))
        #expect(deferred.taskEntries != nil)

        let whole = try ModuleLoader.load(path: path, module: "bench", expectedName: "bench")
        #expect(!whole.manifest.isPartial)
        #expect(whole.manifest.processes.map(\.type) == deferred.manifest.processes.map(\.type))
        #expect(whole.manifest.processType("bench_source")?.settingsSchema.objectValue?["properties"] != nil)
        #expect(whole.manifest.processType("noop")?.inputSchema != nil)
    }

    @Test func aModuleWithoutTheDeferSymbolGivesItsWholeManifestToAWorker() throws {
        let path = try CModuleFixture.module("nodefer", manifest: CModuleFixture.validManifest)
        let loaded = try ModuleLoader.load(path: path, module: "cmod", deferManifest: true)
        #expect(!loaded.manifest.isPartial)
        #expect(loaded.manifest.processType("ticker")?.settingsSchema == ["type": "object"])
    }

    @Test func aPartialManifestTheHostDidNotAskForIsRefused() throws {
        let path = try CModuleFixture.module("unasked", manifest: #"{"name":"unasked","version":"1","partial":true,"processes":[{"type":"t","kind":"datasource"}]}"#)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("partial"))
        #expect(error.message.contains("agent_module_defer_manifest"))
        // A worker's load does not ask a library that exports no agent_module_defer_manifest.
        #expect(throws: ModuleLoadError.self) { try ModuleLoader.load(path: path, module: "unasked", deferManifest: true) }
    }

    /// A C module that keeps the contract: the whole manifest unless the host deferred it.
    private func deferringModule(_ name: String, partial: String) throws -> String {
        func literal(_ json: String) -> String { "\"" + json.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return try CModuleFixture.build(name, source: """
        #include <agent_module.h>
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el;
            return AGENT_OK;
        }
        static int deferred;
        void agent_module_defer_manifest(void) { deferred = 1; }
        static agent_module description = { .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module), .run_process = run };
        const agent_module *agent_module_entry(void) {
            description.manifest_json = deferred ? \(literal(partial)) : \(literal(CModuleFixture.validManifest));
            return &description;
        }
        """)
    }

    @Test func aCModuleThatDefersGivesAWorkerItsPartialManifest() throws {
        let path = try deferringModule("cdefer", partial: #"{"name":"cmod","version":"0.1.0","partial":true,"processes":[{"type":"ticker","kind":"datasource"}]}"#)
        let whole = try ModuleLoader.load(path: path, module: "cmod", expectedName: "cmod")
        #expect(!whole.manifest.isPartial)
        let deferred = try ModuleLoader.load(path: path, module: "cmod", deferManifest: true)
        #expect(deferred.manifest.isPartial)
        #expect(deferred.manifest.processType("ticker")?.kind == "datasource")
    }

    @Test func aBrokenDeferredManifestSaysItIsTheOneAWorkerGot() throws {
        let path = try deferringModule("cbadpartial", partial: #"{"name":"cmod","version":"0.1.0","partial":"yes","processes":[]}"#)
        let error = try #require(throws: ModuleLoadError.self) { try ModuleLoader.load(path: path, module: "cmod", deferManifest: true) }
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("the manifest it gives a worker after agent_module_defer_manifest() is invalid"))
        #expect(error.message.contains("/partial: expected a boolean, found string"))
        #expect(error.description.contains(path))
    }

    @Test func aLoopOfSymbolicLinksIsNamedAsOne() throws {
        let path = CModuleFixture.directory + "/libloop-\(UUID().uuidString.prefix(8)).so"
        #expect(symlink(path, path) == 0)
        defer { unlink(path) }
        let error = try #require(loadError(path))
        #expect(error.code == .notFound)
        #expect(error.message.contains("a loop of symbolic links"))
        #expect(error.description.contains(path))
    }

    @Test func aFIFOInTheLibrarysPlaceIsRefusedWithoutWaitingForAWriter() throws {
        let path = CModuleFixture.directory + "/libfifo-\(UUID().uuidString.prefix(8)).so"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let error = try #require(loadError(path))
        #expect(error.code == .notAFile)
        #expect(error.message.contains("a FIFO"))
    }

    @Test func aPartialMarkThatIsNotABooleanIsNamedByItsPointer() throws {
        let path = try CModuleFixture.module("oddpartial", manifest: #"{"name":"oddpartial","version":"1","partial":"yes","processes":[]}"#)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("/partial: expected a boolean, found string"))
    }
}
