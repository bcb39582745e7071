import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

struct MemoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Read and write the running agent's shared memory (named JSON values).",
        discussion: """
        Shared memory holds named JSON values that workflows, processes and task handlers read \
        and write (`context.memory` in the SDK). A key is agent-wide, or with --run belongs to one \
        workflow run, which must exist (its keys go when the retention deletes it). Every write raises the key's version by one; --expected-version makes a \
        write a compare-and-set (0: only if the key does not exist). A key is 1 to 256 bytes, a \
        value at most 256 KiB as JSON. Kept in the store (none without it).
        """,
        subcommands: [MemoryList.self, MemoryGet.self, MemorySet.self, MemoryDelete.self])

    /// `memory list`: KEY  vVERSION  UPDATED  VALUE (cut at 200 characters).
    static func line(_ entry: JSONValue) -> String {
        let value = entry["value"]?.serialized() ?? "null"
        return "\(entry["key"]?.stringValue ?? "?")  v\(entry["version"]?.numberValue?.intValue ?? 0)  \(entry["updated"]?.stringValue ?? "?")  "
            + (value.count > 200 ? value.prefix(200) + "…" : value)
    }
}

struct MemoryScopeOptions: ParsableArguments {
    @Option(name: .long, help: "A workflow run's own scope (its id); default: the agent-wide scope.")
    var run: String?
}

struct MemoryList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List keys in key order: KEY vVERSION UPDATED VALUE (long values cut; --json for all).")

    @Option(name: .long, help: "Only keys starting with this.")
    var prefix: String?

    @Option(name: .long, help: "At most this many keys (1 to 1000; default 100). The rest: --after the last key shown.")
    var limit: Int = 100

    @Option(name: .long, help: "Only keys after this one (paging).")
    var after: String?

    @Flag(name: .long, help: "Print the entries as JSON lines (key, scope, version, updated, value); a page cut short says on stderr where the next begins.")
    var json = false

    @OptionGroup var scope: MemoryScopeOptions
    @OptionGroup var location: LocationOptions

    func validate() throws {
        if !(1...MemoryLimits.listEntries).contains(limit) { throw ValidationError("--limit must be from 1 to \(MemoryLimits.listEntries), not \(limit)") }
    }

    func run() throws {
        let request = MemoryListCommand.Request(run: scope.run, prefix: prefix, after: after, limit: limit)
        let answer = try TaskCommand.send(MemoryListCommand.request(request), location: location)
        let entries = answer["entries"]?.arrayValue ?? []
        // Where the next page begins, as a shell word (a key may hold spaces or quotes).
        // `--after=`: a key that begins with `-` would be read as an option.
        let more = answer["next"]?.stringValue.map { "… more keys: --after=\(InputReferences.shellQuoted($0))" }
        if json {
            entries.forEach { print($0.serialized()) }
            // On stderr: stdout stays one entry a line; a page cut short is not taken for the last.
            if let more { FileHandle.standardError.write(Data((more + "\n").utf8)) }
            return
        }
        if entries.isEmpty { print(prefix.map { "no keys starting with \"\($0)\"" } ?? "no keys") }
        for entry in entries { print(MemoryCommand.line(entry)) }
        if let more { print(more) }
    }
}

struct MemoryGet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print a key's value as JSON (exit 1 when there is no such key).")

    @Argument(help: "The key.")
    var key: String

    @Flag(name: .long, help: "Print the whole entry as JSON (key, scope, version, updated, value).")
    var json = false

    @OptionGroup var scope: MemoryScopeOptions
    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(MemoryGetCommand.request(.init(key: key, run: scope.run)), location: location)
        let entry = answer["entry"] ?? .null
        print(json ? entry.serialized() : (entry["value"] ?? .null).serialized(pretty: true))
    }
}

struct MemorySet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Write a JSON value at a key; prints the key's new version.",
        discussion: """
        VALUE is JSON ('{"tier": 3}', '42', '"text"'), or @FILE to read JSON from a file; with \
        --string it is taken as a string as it is.
        """)

    @Argument(help: "The key (1 to 256 bytes).")
    var key: String

    @Argument(help: "The value: JSON, or @FILE (at most 256 KiB).")
    var value: String

    @Flag(name: .long, help: "Take VALUE as a string, not as JSON.")
    var string = false

    @Option(name: .long, help: "Write only if the key is at this version (0: only if it does not exist).")
    var expectedVersion: Int?

    @Flag(name: .long, help: "Print the entry written as JSON.")
    var json = false

    @OptionGroup var scope: MemoryScopeOptions
    @OptionGroup var location: LocationOptions

    func validate() throws {
        if let expectedVersion, expectedVersion < 0 { throw ValidationError("--expected-version must be 0 or more, not \(expectedVersion)") }
    }

    func run() throws {
        let request = MemorySetCommand.Request(key: key, run: scope.run, value: string ? .string(value) : try Self.readValue(value),
                                               expectedVersion: expectedVersion)
        let answer = try TaskCommand.send(MemorySetCommand.request(request), location: location)
        let entry = answer["entry"] ?? .null
        print(json ? entry.serialized() : "\(key) = version \(entry["version"]?.numberValue?.intValue ?? 0)")
    }

    /// VALUE: JSON text, or `@FILE`.
    static func readValue(_ text: String) throws -> JSONValue {
        var source = "VALUE"
        var data = Data(text.utf8)
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            source = path
            data = try ArgumentFile.read(path, what: "VALUE @\(path)")
        }
        do {
            return try JSONValue.parse(data)
        } catch {
            throw ValidationError("\(source) is not valid JSON at line \(error.line), column \(error.column): \(error.message) (a plain string: quote it as JSON, '\"text\"', or pass --string)")
        }
    }
}

struct MemoryDelete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a key (a key that does not exist is no error).")

    @Argument(help: "The key.")
    var key: String

    @Option(name: .long, help: "Delete only if the key is at this version.")
    var expectedVersion: Int?

    @OptionGroup var scope: MemoryScopeOptions
    @OptionGroup var location: LocationOptions

    func validate() throws {
        if let expectedVersion, expectedVersion < 0 { throw ValidationError("--expected-version must be 0 or more, not \(expectedVersion)") }
    }

    func run() throws {
        let request = MemoryDeleteCommand.Request(key: key, run: scope.run, expectedVersion: expectedVersion)
        let answer = try TaskCommand.send(MemoryDeleteCommand.request(request), location: location)
        print(answer["deleted"] == true ? "\(key) deleted" : "\(key) did not exist")
    }
}
