import Foundation

/// A `jsonl/1` module written into a test agent's folder: `modules/NAME/module.json` and its
/// programs (small Python scripts here; any executable will do).
package enum ProgramModuleFixture {
    /// Writes the module: `manifest` is the text of `module.json`, `files` the programs (name →
    /// text). Returns the agent's folder.
    @discardableResult
    package static func write(name: String, manifest: String, files: [String: String] = [:],
                              into directory: String = TestPaths.temporaryDirectory("jsonl")) throws -> String {
        try TestPaths.requireOutsideSourceTree(directory)
        let folder = "\(directory)/modules/\(name)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try manifest.write(toFile: folder + "/module.json", atomically: true, encoding: .utf8)
        for (file, text) in files {
            try text.write(toFile: "\(folder)/\(file)", atomically: true, encoding: .utf8)
        }
        return directory
    }

    /// A manifest with one type per entry: type → (kind, program file, extra members' JSON).
    package static func manifest(name: String, types: [(type: String, kind: String, program: String, extra: String)]) -> String {
        let entries = types.map { type in
            #""\#(type.type)": {"kind": "\#(type.kind)", "command": ["python3", "\#(type.program)"]\#(type.extra.isEmpty ? "" : ", " + type.extra)}"#
        }
        return #"{"name": "\#(name)", "version": "1.0.0", "protocol": "jsonl/1", "process_types": {\#(entries.joined(separator: ", "))}}"#
    }

    /// Python helpers every test program starts with: `send(frame)`, `frames()` (the lines
    /// read), and the start frame already read as `start`.
    package static let prelude = """
        import json, sys, time
        def send(frame):
            sys.stdout.write(json.dumps(frame) + "\\n")
            sys.stdout.flush()
        def frames():
            for line in sys.stdin:
                yield json.loads(line)
        start = json.loads(sys.stdin.readline())["start"]

        """
}
