import Foundation

/// Builds real shared libraries from C source with the system compiler, for loader tests.
package enum CModuleFixture {
    package struct CompileError: Error, CustomStringConvertible { package var description: String }

    package static let directory = TestPaths.temporaryDirectory("c-modules")

    /// Compiles `source` with `cc -shared -fPIC` and returns the library's path.
    package static func build(_ name: String, source: String, extraFlags: [String] = []) throws -> String {
        // A folder per build: tests running at once build the same name (one copied the
        // library while another's compiler was writing it, and found it empty).
        let folder = "\(directory)/\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sourcePath = "\(folder)/\(name).c"
        let library = "\(folder)/lib\(name).so"
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["cc", "-shared", "-fPIC", "-I", TestPaths.abiInclude, "-o", library, sourcePath] + extraFlags
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        guard ProcessDeadline.waitForExit(process, within: 300, "cc \(sourcePath)") == 0 else {
            throw CompileError(description: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        }
        return library
    }

    /// A C module exporting `manifest` with the given ABI version and struct size.
    package static func module(_ name: String, manifest: String?, abiVersion: String = "AGENT_MODULE_ABI_VERSION",
                       structSize: String = "sizeof(agent_module)", runProcess: String = "run") throws -> String {
        let literal = manifest.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" } ?? "NULL"
        return try build(name, source: """
        #include <agent_module.h>
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el;
            return AGENT_OK;
        }
        static const agent_module description = {
            .abi_version = \(abiVersion), .struct_size = \(structSize),
            .manifest_json = \(literal), .run_process = \(runProcess),
        };
        const agent_module *agent_module_entry(void) { return &description; }
        """)
    }

    /// A module `name` of one datasource type `type` whose run runs `inRun` (C statements),
    /// logs `greeting` (or the C string `greetingExpression`) and waits to be stopped; `top`
    /// is C code above it (includes, helpers); `extraFlags` go to the compiler.
    package static func greetingModule(_ name: String, type: String, greeting: String, greetingExpression: String? = nil, top: String = "",
                                       inRun: String = "", extraFlags: [String] = []) throws -> String {
        let manifest = #"{\"name\":\"\#(name)\",\"version\":\"1\",\"processes\":[{\"type\":\"\#(type)\",\"kind\":\"datasource\",\"settings_schema\":{\"type\":\"object\"}}]}"#
        return try build(name, source: """
        #include <agent_module.h>
        #include <string.h>
        \(top)
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)e; (void)el;
            \(inRun)
            const char *text = \(greetingExpression ?? "\"\(greeting)\"");
            h->log(h->host_ctx, AGENT_LOG_INFO, text, strlen(text));
            agent_event event;
            while (h->next_event(h->host_ctx, -1, &event) != AGENT_STOPPED) {}
            return AGENT_OK;
        }
        static const agent_module description = {
            .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
            .manifest_json = "\(manifest)", .run_process = run,
        };
        const agent_module *agent_module_entry(void) { return &description; }
        """, extraFlags: extraFlags)
    }

    package static let validManifest = #"{"name":"cmod","version":"0.1.0","processes":[{"type":"ticker","kind":"datasource","description":"ticks","settings_schema":{"type":"object"}}]}"#

    /// A module of one monitor type `watcher` declaring `queries` (a JSON array) in its manifest.
    package static func queryModule(_ name: String, queries: String) throws -> String {
        let manifest = #"{"name":"\#(name)","version":"1","processes":[{"type":"watcher","kind":"monitor","settings_schema":{"type":"object","properties":{"key":{"type":"string","default":"pair"}}},"queries":\#(queries)}]}"#
        return try CModuleFixture.module(name, manifest: manifest)
    }
}
