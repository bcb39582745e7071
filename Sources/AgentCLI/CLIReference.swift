import AgentBase
import Foundation
import JSONSchema

/// `docs/reference/cli.md`: every command line tool with its subcommands, arguments and
/// options, rendered from what the tools' own argument parsers say about themselves
/// (`TOOL --experimental-dump-help`, the JSON that scripts/man-pages.py reads too).
public enum CLIReference {
    /// The tools, in the order the reference lists them.
    public static let tools = ["agent-control", "validate-settings", "create-agent", "add-agent-module", "agent-bench"]

    /// The reference for the tools' `--experimental-dump-help` documents, in ``tools`` order.
    public static func markdown(_ dumps: [(tool: String, help: JSONValue)]) -> String {
        var text = Markdown.header("Command line reference", from: "each tool's argument parser (TOOL --experimental-dump-help)")
        text += "\nEvery command of the tools the runtime installs, with its arguments and options (`TOOL COMMAND --help` prints the same).\n"
        for (_, help) in dumps {
            guard let command = help["command"] else { continue }
            render(command, path: [], level: 2, into: &text)
        }
        return text
    }

    private static func render(_ command: JSONValue, path: [String], level: Int, into text: inout String) {
        let name = command["commandName"]?.stringValue ?? "?"
        let full = path + [name]
        text += "\n" + String(repeating: "#", count: min(level, 4)) + " `\(full.joined(separator: " "))`\n\n"
        if let abstract = command["abstract"]?.stringValue, !abstract.isEmpty { text += abstract + "\n\n" }
        let subcommands = visible(command)
        let arguments = shown(command)
        text += "Usage: " + Markdown.code(usage(full, arguments, hasSubcommands: !subcommands.isEmpty)) + "\n\n"
        if let discussion = command["discussion"]?.stringValue, !discussion.isEmpty { text += paragraphs(discussion) + "\n" }
        if !arguments.isEmpty {
            text += Markdown.table(["Argument", "Value", "Default", "Description"], arguments.map(row))
        }
        if !subcommands.isEmpty {
            text += "\nCommands: " + subcommands.map { Markdown.code(($0["commandName"]?.stringValue ?? "?")) }.joined(separator: ", ") + ".\n"
        }
        for subcommand in subcommands { render(subcommand, path: full, level: level + 1, into: &text) }
    }

    private static func visible(_ command: JSONValue) -> [JSONValue] {
        (command["subcommands"]?.arrayValue ?? []).filter {
            $0["shouldDisplay"]?.boolValue != false && $0["commandName"]?.stringValue != "help"
        }
    }

    /// The arguments help shows, without the ones every command has (--help, --version).
    private static func shown(_ command: JSONValue) -> [JSONValue] {
        let implicit: Set<String> = ["help", "version", "experimental-dump-help"]
        return (command["arguments"]?.arrayValue ?? []).filter { argument in
            argument["shouldDisplay"]?.boolValue != false
                && !(argument["names"]?.arrayValue ?? []).contains { implicit.contains($0["name"]?.stringValue ?? "") }
        }
    }

    private static func usage(_ path: [String], _ arguments: [JSONValue], hasSubcommands: Bool) -> String {
        var words = path
        if arguments.contains(where: { $0["kind"]?.stringValue != "positional" }) { words.append("[options]") }
        for argument in arguments where argument["kind"]?.stringValue == "positional" {
            var word = "<\(argument["valueName"]?.stringValue ?? "value")>"
            if argument["isRepeating"]?.boolValue == true { word += " ..." }
            words.append(argument["isOptional"]?.boolValue == true ? "[\(word)]" : word)
        }
        if hasSubcommands { words.append("<command>") }
        return words.joined(separator: " ")
    }

    private static func row(_ argument: JSONValue) -> [String] {
        let kind = argument["kind"]?.stringValue ?? "option"
        let names = (argument["names"]?.arrayValue ?? []).map { name -> String in
            let text = name["name"]?.stringValue ?? ""
            return name["kind"]?.stringValue == "long" ? "--" + text : "-" + text
        }
        let label = kind == "positional" ? "<\(argument["valueName"]?.stringValue ?? "value")>" : names.joined(separator: ", ")
        var value = kind == "option" ? "<\(argument["valueName"]?.stringValue ?? "value")>" : ""
        if let values = argument["allValues"]?.arrayValue, !values.isEmpty {
            value = values.compactMap(\.stringValue).joined(separator: ", ")
        }
        if argument["isRepeating"]?.boolValue == true, kind != "flag" { value += " (repeatable)" }
        var description = argument["abstract"]?.stringValue ?? ""
        if let more = argument["discussion"]?.stringValue, !more.isEmpty { description += " " + more }
        return [Markdown.cell(Markdown.code(label)), Markdown.cell(value.isEmpty ? "" : Markdown.code(value)),
                Markdown.cell(argument["defaultValue"]?.stringValue.map(Markdown.code) ?? ""), Markdown.cell(description)]
    }

    /// A discussion as Markdown: its indented lines (examples, tables) as code blocks, the
    /// rest as paragraphs.
    static func paragraphs(_ text: String) -> String {
        var out: [String] = []
        var block: [String] = []
        func flush() {
            guard !block.isEmpty else { return }
            while block.last?.isEmpty == true { block.removeLast() }
            out += ["```text"] + block + ["```", ""]
            block = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("  ") || (!block.isEmpty && line.isEmpty) {
                block.append(line)
            } else {
                flush()
                out.append(line)
                if !line.isEmpty { out.append("") }
            }
        }
        flush()
        var result = out.joined(separator: "\n")
        while result.contains("\n\n\n") { result = result.replacingOccurrences(of: "\n\n\n", with: "\n\n") }
        return result.hasSuffix("\n") ? result : result + "\n"
    }
}
