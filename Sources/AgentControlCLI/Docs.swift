import AgentBase
import AgentCLI
import AgentCommands
import AgentHTTP
import AgentRuntime
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

/// `agent-control docs`: writes (or checks) the references of docs/reference, each generated
/// from the declarations the runtime itself works from, so that none is written by hand.
struct Docs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docs",
        abstract: "Write or check the references of docs/reference, generated from the code.",
        discussion: """
        Generates settings.md (the host's schema and the shipped modules' schemas, described by \
        agent-worker and libsystem.so, libsample.so next to agent-control), cli.md (every tool's \
        --experimental-dump-help, run from the same folder), http-api.md and openapi.json (the command \
        registry), metrics.md (the metric declarations) and events.md (the runtime's event declarations). \
        The text depends on the code only: no date, no path of this machine.

          agent-control docs --write docs/reference
          agent-control docs --check docs/reference

        With --check nothing is written; the files that differ are named (a failure).
        """)

    @Option(name: .long, help: "Write the references into this folder (made when missing).")
    var write: String?

    @Option(name: .long, help: "Compare the references with the files in this folder; exit 1 when one differs or is missing.")
    var check: String?

    @Option(name: .long, parsing: .upToNextOption, help: "Only these references (e.g. --only cli.md settings.md).")
    var only: [String] = []

    func validate() throws {
        guard (write == nil) != (check == nil) else { throw ValidationError("give one of --write DIR and --check DIR") }
        if let unknown = only.first(where: { !ReferenceFiles.names.contains($0) }) {
            throw ValidationError("no reference \(unknown); they are \(ReferenceFiles.names.joined(separator: ", "))")
        }
    }

    func run() throws {
        let files: [(name: String, text: String)]
        do {
            files = try ReferenceFiles.make(only.isEmpty ? ReferenceFiles.names : only, runtimeDirectory: AgentLauncher.runtimeDirectory)
        } catch {
            throw CommandFailure.report("cannot generate the references: \(error)")
        }
        if let write {
            try FileManager.default.createDirectory(atPath: write, withIntermediateDirectories: true)
            for file in files { try Data(file.text.utf8).write(to: URL(fileURLWithPath: write + "/" + file.name), options: .atomic) }
            print("wrote \(files.map(\.name).joined(separator: ", ")) to \(write)")
            return
        }
        let folder = check ?? "."
        let stale = files.filter { FileManager.default.contents(atPath: folder + "/" + $0.name).map { String(decoding: $0, as: UTF8.self) } != $0.text }
        guard stale.isEmpty else {
            throw CommandFailure.report("\(stale.map { folder + "/" + $0.name }.joined(separator: ", ")): not what the code generates now; run `\(Markdown.regenerateCommand)`")
        }
        print("\(files.count) reference\(files.count == 1 ? "" : "s") up to date in \(folder)")
    }
}

/// The references and how each is made.
enum ReferenceFiles {
    static let names = ["cli.md", "events.md", "http-api.md", "metrics.md", "openapi.json", "settings.md"]

    /// The text of each named reference. `runtimeDirectory`: where agent-worker, the shipped
    /// modules' libraries and the other tools are.
    static func make(_ wanted: [String], runtimeDirectory: String) throws -> [(name: String, text: String)] {
        try wanted.sorted().map { name in
            switch name {
            case "cli.md": (name, CLIReference.markdown(try CLIReference.tools.map { ($0, try dumpHelp($0, in: runtimeDirectory)) }))
            case "events.md": (name, EventsReference.markdown())
            case "http-api.md": (name, APIReference.markdown())
            case "metrics.md": (name, MetricsReference.markdown())
            case "openapi.json": (name, APIReference.openAPIJSON())
            default:
                (name, SettingsReference.markdown(modules: try SettingsReference.describeShippedModules(in: runtimeDirectory, worker: runtimeDirectory + "/agent-worker")))
            }
        }
    }

    /// What `tool --experimental-dump-help` prints, parsed.
    static func dumpHelp(_ tool: String, in directory: String) throws -> JSONValue {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: directory + "/" + tool)
        process.arguments = ["--experimental-dump-help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReferenceError(message: "\(directory)/\(tool) --experimental-dump-help exited with \(process.terminationStatus); build every tool first (swift build)")
        }
        return try JSONValue.parse(data)
    }

    struct ReferenceError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
