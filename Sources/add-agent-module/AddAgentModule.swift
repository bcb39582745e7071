import AgentScaffolding
import AgentVersion
import ArgumentParser
import Foundation

extension ModuleLanguage: ExpressibleByArgument {}

@main
struct AddAgentModule: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-agent-module",
        abstract: "Add a module to the agent in the current folder.",
        discussion: """
        Run in an agent folder (or its modules/ folder). Writes modules/NAME/ with Swift sources \
        for a datasource, a monitor, a logic adapter and a task handler (its input declared \
        once with @Setting), their settings schemas, a settings_template.json and tests; lists \
        the module in Package.swift (between the agent-modules markers) and enables it and its \
        template's processes and task in settings.json, \
        editing it in place (the rest of the file keeps its formatting). \
        With --empty the sources are compiling skeletons without behaviour. \
        With --language python it writes a module.json manifest and Python programs speaking \
        the jsonl/1 protocol (source.py, monitor.py, adapter.py, task.py, a unittest file and \
        the SDK's agentruntime.py) instead, and leaves Package.swift as it is. NAME must be a \
        valid Swift identifier (for Python: letters, digits and '_'), and not the name of a module \
        the agent finds already (the runtime's system and sample, the built-in chat, a library in \
        AGENT_MODULE_PATH), which its own would hide, nor differ from such a module or one of the \
        agent's own only in the case of its letters; an existing module is never overwritten. Exit status: 0 added; \
        1 not in an agent folder, an invalid or existing name, or a file that cannot be written; \
        64 usage error.
        """,
        version: AgentVersion.line(for: "add-agent-module")
    )

    @Option(name: .customShort("C"), help: ArgumentHelp("Run as if started in DIR (as git -C).", valueName: "dir"))
    var workingDirectory: String?

    @Argument(help: "The module's name: letters, digits and '_', starting with a letter.")
    var name: String

    @Flag(name: .long, help: "Write skeletons with no behaviour (Swift only).")
    var empty = false

    @Option(name: .long, help: ArgumentHelp("The module's language: swift (a shared library) or python (programs speaking jsonl/1).", valueName: "language"))
    var language: ModuleLanguage = .swift

    @Flag(name: .long, help: "Do not change settings.json.")
    var noEnable = false

    func run() throws {
        do {
            if let workingDirectory, !FileManager.default.changeCurrentDirectoryPath(workingDirectory) {
                throw ScaffoldingError("no_such_folder", "-C: cannot change to that folder: \(String(cString: strerror(errno)))", path: workingDirectory)
            }
            let home = try RuntimeHome.locate()
            let result = try ModuleAdder(home: home).add(name, empty: empty, language: language, in: FileManager.default.currentDirectoryPath,
                                                        enable: !noEnable)
            print("added module \"\(name)\" to \(result.agentDirectory):")
            for file in result.files { print("  \(file)") }
            for edit in result.edits { print("  \(edit)") }
            for note in result.notes { print("note: \(note)") }
            switch language {
            case .swift:
                print("""

                next:
                  \(home.binaries)/agent-control console     # builds lib\(name).so and runs it
                  swift test                                  # the module's tests
                """)
            case .python:
                print("""

                next:
                  \(home.binaries)/agent-control console     # runs the module's programs
                  (cd modules/\(name) && python3 -m unittest)  # the module's tests
                """)
            }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
