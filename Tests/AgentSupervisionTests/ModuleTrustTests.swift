@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Testing

/// A module file another user could change is refused before any worker loads it, the way
/// sshd refuses keys: real files, real modes and owners (the tests run as root).
@Suite(.ownThreads, .serialized) struct ModuleTrustTests {
    /// An agent whose only module is a C library in `lib/` that marks a file when loaded.
    struct Agent {
        let directory: String
        var library: String { directory + "/lib/libcmod.so" }
        var marker: String { directory + "/loaded" }

        init(trust: Bool = false) throws {
            directory = TestPaths.temporaryDirectory("trust")
            try FileManager.default.createDirectory(atPath: directory + "/lib", withIntermediateDirectories: true)
            chmod(directory + "/lib", 0o755)
            let built = try CModuleFixture.build("trust\(UUID().uuidString.prefix(8).lowercased())", source: """
            #include <agent_module.h>
            #include <fcntl.h>
            #include <unistd.h>
            __attribute__((constructor)) static void mark(void) { int fd = open("\(directory)/loaded", O_CREAT | O_WRONLY, 0600); if (fd >= 0) close(fd); }
            static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
                (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el; return AGENT_OK;
            }
            static const agent_module description = {
                .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
                .manifest_json = "{\\"name\\":\\"cmod\\",\\"version\\":\\"0.1.0\\",\\"processes\\":[{\\"type\\":\\"ticker\\",\\"kind\\":\\"datasource\\",\\"settings_schema\\":{\\"type\\":\\"object\\"}}]}",
                .run_process = run,
            };
            const agent_module *agent_module_entry(void) { return &description; }
            """)
            try FileManager.default.copyItem(atPath: built, toPath: directory + "/lib/libcmod.so")
            chmod(directory + "/lib/libcmod.so", 0o755)
            let trustKey = trust ? #""trust_module_files": true, "# : ""
            try #"{\#(trustKey)"enabled_modules": ["lib/libcmod.so"], "processes": {"t": {"type": "ticker"}}}"#
                .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        }

        func validate() throws -> ProgramResult {
            try runProgram("validate-settings", ["--settings", directory + "/settings.json"])
        }

        var wasLoaded: Bool { FileManager.default.fileExists(atPath: marker) }
    }

    @Test func safeModuleIsLoaded() throws {
        let agent = try Agent()
        let result = try agent.validate()
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(agent.wasLoaded)
    }

    @Test func worldWritableModuleFileIsRefusedBeforeAnyWorkerLoadsIt() throws {
        let agent = try Agent()
        chmod(agent.library, 0o777)
        let result = try agent.validate()
        #expect(result.status == 2)
        #expect(result.stdout.contains("refusing to load it: the file \(agent.library) is writable by everyone (mode 777); fix with `chmod go-w \(agent.library)`"), "\(result.stdout)")
        #expect(result.stdout.contains("\"trust_module_files\": true"))
        #expect(!agent.wasLoaded)
        // The same for a start: nothing is started, and the error says why.
        let started = try runProgram("agent-control", ["start", "--settings", agent.directory + "/settings.json", "--no-build"])
        #expect(started.status != 0)
        #expect(started.stderr.contains("is writable by everyone"), "\(started.stderr)")
        #expect(!agent.wasLoaded)
    }

    @Test func moduleWritableByAGroupOfOthersIsRefused() throws {
        let agent = try Agent()
        #expect(chown(agent.library, 0, 12345) == 0)
        chmod(agent.library, 0o775)
        let result = try agent.validate()
        #expect(result.status == 2)
        #expect(result.stdout.contains("is writable by its group (gid 12345) (mode 775)"), "\(result.stdout)")
        #expect(!agent.wasLoaded)
    }

    @Test func moduleWritableByTheOwnersPrivateGroupIsLoaded() throws {
        // root's primary group lists no other member here: writable by it is writable by root.
        let agent = try Agent()
        let root = try #require(getpwuid(0))
        #expect(ModuleLocator.isPrivateGroup(root.pointee.pw_gid, of: 0))
        #expect(chown(agent.library, 0, root.pointee.pw_gid) == 0)
        chmod(agent.library, 0o775)
        let result = try agent.validate()
        #expect(result.status == 0, "\(result.stdout)")
        #expect(agent.wasLoaded)
    }

    @Test func moduleInAWorldWritableFolderIsRefused() throws {
        let agent = try Agent()
        chmod(agent.directory + "/lib", 0o777)
        let result = try agent.validate()
        #expect(result.status == 2)
        #expect(result.stdout.contains("the folder \(agent.directory)/lib is writable by everyone (mode 777); fix with `chmod go-w \(agent.directory)/lib`"), "\(result.stdout)")
        #expect(!agent.wasLoaded)
    }

    @Test func stickyWorldWritableFolderIsAccepted() throws {
        let agent = try Agent()
        chmod(agent.directory + "/lib", 0o1777)
        let result = try agent.validate()
        #expect(result.status == 0, "\(result.stdout)")
        #expect(agent.wasLoaded)
    }

    @Test func moduleOwnedByAnotherUserIsRefused() throws {
        let agent = try Agent()
        #expect(chown(agent.library, 12345, 12345) == 0)
        let result = try agent.validate()
        #expect(result.status == 2)
        #expect(result.stdout.contains("the file \(agent.library) is owned by uid 12345, not by the agent's user (uid 0) or root; fix with `chown 0 \(agent.library)`"), "\(result.stdout)")
        #expect(!agent.wasLoaded)
    }

    @Test func folderOwnedByAnotherUserIsRefused() throws {
        let agent = try Agent()
        #expect(chown(agent.directory + "/lib", 12345, 12345) == 0)
        let result = try agent.validate()
        #expect(result.status == 2)
        #expect(result.stdout.contains("the folder \(agent.directory)/lib is owned by uid 12345"), "\(result.stdout)")
        #expect(!agent.wasLoaded)
    }

    @Test func symbolicLinkToAnUnsafeFolderIsRefused() throws {
        let agent = try Agent()
        let elsewhere = TestPaths.temporaryDirectory("trust-target")
        chmod(elsewhere, 0o777)
        try FileManager.default.moveItem(atPath: agent.library, toPath: elsewhere + "/libcmod.so")
        try FileManager.default.createSymbolicLink(atPath: agent.library, withDestinationPath: elsewhere + "/libcmod.so")
        let result = try agent.validate()
        #expect(result.status == 2)
        #expect(result.stdout.contains("the folder \(elsewhere) is writable by everyone"), "\(result.stdout)")
        #expect(!agent.wasLoaded)
    }

    @Test func explicitTrustOverridesTheCheck() throws {
        let agent = try Agent(trust: true)
        chmod(agent.library, 0o777)
        #expect(chown(agent.directory + "/lib", 12345, 12345) == 0)
        let result = try agent.validate()
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("\"trust_module_files\": true"), "\(result.stderr)")
        #expect(agent.wasLoaded)
    }

    @Test func trustSettingMustBeABoolean() throws {
        let directory = TestPaths.temporaryDirectory("trust-setting")
        try #"{"enabled_modules": [], "processes": {}, "trust_module_files": "yes"}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json"])
        #expect(result.status == 2)
        #expect(result.stdout.contains("/trust_module_files: expected a boolean"), "\(result.stdout)")
    }

    @Test func worldWritableSourceFolderOfAnAgentsOwnModuleIsRefusedBeforeItIsBuilt() throws {
        let directory = TestPaths.temporaryDirectory("trust-source")
        try FileManager.default.createDirectory(atPath: directory + "/modules/mine/Sources", withIntermediateDirectories: true)
        try "// code\n".write(toFile: directory + "/modules/mine/Sources/Mine.swift", atomically: true, encoding: .utf8)
        chmod(directory + "/modules/mine/Sources/Mine.swift", 0o666)
        try #"{"enabled_modules": ["mine"], "processes": {}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json"])
        #expect(result.status == 2)
        #expect(result.stdout.contains("the file \(directory)/modules/mine/Sources/Mine.swift is writable by everyone"), "\(result.stdout)")
        #expect(!result.stderr.contains("building module"), "\(result.stderr)")
    }
}
