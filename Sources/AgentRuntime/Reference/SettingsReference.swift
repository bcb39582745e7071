import AgentBase
import AgentCore
import AgentSupervision
import JSONSchema

/// `docs/reference/settings.md`: every key of settings.json with its type, default, bounds,
/// description and an example, made from the host's schema (``HostSchema``) and the process
/// types' schemas (the runtime's `chatbot` and the shipped modules', as their libraries
/// describe themselves), so that it cannot say anything the validator does not check.
public enum SettingsReference {
    /// The modules the Debian package ships next to agent-control (scripts/package-deb.sh).
    public static let shippedModules = ["sample", "system"]

    /// The manifests of ``shippedModules``, as their libraries in `directory` describe
    /// themselves to `worker` (agent-worker; one short-lived worker each, nothing loaded here).
    public static func describeShippedModules(in directory: String, worker: String) throws -> [ModuleManifest] {
        let locator = ModuleLocator(agentDirectory: directory, configuration: "debug", searchPath: [], runtimeDirectory: directory)
        var locations: [ModuleLocation] = []
        for name in shippedModules { locations.append(try locator.locate(directory + "/lib\(name).so")) }
        let manifests = try ModuleDescriber(workerPath: worker).describe(locations)
        return shippedModules.compactMap { manifests[$0] }
    }

    /// The reference, for the manifests of ``shippedModules``.
    public static func markdown(modules: [ModuleManifest]) -> String {
        var text = Markdown.header("Settings reference", from: "the host's schema (HostSchema) and the process types' schemas")
        text += """

        Every key `settings.json` may hold. `validate-settings` (and `agent-control validate`) check a file \
        against these same schemas; an unknown key is refused. A key with a dot is a member of the key before it \
        (`store.retention.events_days`), `[]` a member of each item of an array, `<name>` a name you choose. \
        Bounds are inclusive unless written `>` or `<`; an example is a value the key accepts.

        """
        for (section, keys) in hostSections() {
            text += "\n## \(section)\n\n" + table(keys)
        }
        text += """

        ## Process types

        Each process of `processes` has the keys of `processes.<name>` above and those of its type, \
        at the same level (`processes.<name>.interval`).

        """
        for (module, type) in processTypes(modules) {
            text += "\n### `\(type.type)` (module `\(module)`, kind \(type.kind))\n\n\(type.description)\n\n"
            let keys = SchemaKey.all(in: type.settingsSchema, root: type.settingsSchema, path: "processes.<name>")
            text += keys.isEmpty ? "No keys of its own.\n" : table(keys)
        }
        return text
    }

    /// Keys without a description, as `path` (host) or `type: path` (a process type's).
    public static func undocumentedKeys(modules: [ModuleManifest]) -> [String] {
        var keys = hostSections().flatMap(\.keys).filter { $0.description == nil }.map(\.path)
        for (_, type) in processTypes(modules) {
            keys += SchemaKey.all(in: type.settingsSchema, root: type.settingsSchema, path: "processes.<name>")
                .filter { $0.description == nil }.map { "\(type.type): \($0.path)" }
        }
        return keys
    }

    /// The host's keys by their first part: "Top level" for those without members of their
    /// own, then one section for each key that has them.
    static func hostSections() -> [(section: String, keys: [SchemaKey])] {
        let keys = SchemaKey.all(in: HostSchema.document, root: HostSchema.document)
        func head(_ path: String) -> String { String(path.prefix { $0 != "." && $0 != "[" }) }
        let grouped = Dictionary(grouping: keys, by: { head($0.path) })
        let simple = grouped.filter { $0.value.count == 1 }.flatMap(\.value).sorted { $0.path < $1.path }
        var sections: [(String, [SchemaKey])] = [("Top level", simple)]
        for name in grouped.keys.sorted() where grouped[name]!.count > 1 { sections.append(("`\(name)`", grouped[name]!)) }
        return sections
    }

    /// Every process type with its module: the runtime's own first, then the modules' by name.
    static func processTypes(_ modules: [ModuleManifest]) -> [(module: String, type: ModuleManifest.ProcessType)] {
        ([BuiltinModules.chatManifest] + modules.sorted { $0.name < $1.name }).flatMap { manifest in
            manifest.processes.sorted { $0.type < $1.type }.map { (manifest.name, $0) }
        }
    }

    static func table(_ keys: [SchemaKey]) -> String {
        Markdown.table(["Key", "Type", "Default", "Bounds", "Example", "Description"], keys.map { key in
            [Markdown.code(key.path), Markdown.cell(key.type), key.defaultValue.map { Markdown.cell(Markdown.code($0.serialized())) } ?? "",
             Markdown.cell(key.bounds.joined(separator: ", ")), Markdown.cell(Markdown.code(key.example.serialized())),
             Markdown.cell(key.description ?? "")]
        })
    }
}
