import AgentScaffolding
import AgentVersion
import ArgumentParser
import Foundation

@main
struct CreateAgent: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-agent",
        abstract: "Create a new AgentRuntime agent in a folder.",
        discussion: """
        Writes README.md (build, run, validate, add a module, deploy with systemd), settings.json \
        (valid, running the runtime's own system and sample modules), Package.swift (builds every \
        module under modules/ as a shared library, against the runtime's SDK), modules/ and \
        .gitignore. Existing files are never overwritten unless --force. Templates come from the \
        runtime's Templates/ folder (found from the build tree, an installed copy, or \
        AGENT_RUNTIME_HOME). Exit status: 0 created; 1 a file exists (without --force), the \
        folder cannot be written or the templates are not found; 64 usage error.
        """,
        version: AgentVersion.line(for: "create-agent")
    )

    @Option(name: .customShort("C"), help: ArgumentHelp("Run as if started in DIR (as git -C).", valueName: "dir"))
    var workingDirectory: String?

    @Argument(help: "The agent's folder (created if missing; default: the current folder).")
    var directory: String = "."

    @Option(name: .long, help: "The agent's name (default: the folder's name).")
    var name: String?

    @Flag(name: .long, help: "Overwrite files that exist already.")
    var force = false

    func run() throws {
        do {
            if let workingDirectory, !FileManager.default.changeCurrentDirectoryPath(workingDirectory) {
                throw ScaffoldingError("no_such_folder", "-C: cannot change to that folder: \(String(cString: strerror(errno)))", path: workingDirectory)
            }
            let home = try RuntimeHome.locate()
            let result = try AgentCreator(home: home).create(in: directory, name: name, force: force)
            print("created agent \"\(result.name)\" in \(result.directory):")
            for file in result.files { print("  \(file)") }
            for note in result.notes { print("note: \(note)") }
            let binaries = AgentCreator.shellWord(home.binaries)
            print("""

            next:
              cd \(AgentCreator.shellWord(result.directory))
              \(binaries)/agent-control console          # run it (Ctrl-C stops)
              \(binaries)/add-agent-module NAME          # add a module of your own
            """)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
