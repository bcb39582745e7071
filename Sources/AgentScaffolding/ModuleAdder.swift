import Foundation
import JSONSchema

/// The language a scaffolded module is written in.
public enum ModuleLanguage: String, CaseIterable, Sendable {
    /// A shared library built by the agent's Package.swift (`Templates/module`).
    case swift
    /// A folder with module.json and Python programs speaking jsonl/1 (`Templates/module-python`),
    /// with the SDK's `agentruntime.py` copied beside them.
    case python
}

/// `add-agent-module NAME [--empty] [--language swift|python]`: writes `modules/NAME/` (a
/// datasource, a monitor, a logic adapter, a task handler, their schemas, a settings template,
/// tests), lists a Swift module in the agent's Package.swift and enables the module in
/// settings.json.
public struct ModuleAdder {
    public var home: RuntimeHome

    public init(home: RuntimeHome) { self.home = home }

    /// What was done.
    public struct Result: Sendable {
        public var agentDirectory: String
        public var files: [String]
        public var edits: [String]
        public var notes: [String]
    }

    static let beginMarker = "// agent-modules:begin"
    static let endMarker = "// agent-modules:end"

    /// The agent folder for `directory`: itself, or its parent when it is the agent's modules/.
    public static func agentRoot(from directory: String) throws(ScaffoldingError) -> String {
        let start = URL(fileURLWithPath: directory).standardizedFileURL
        for candidate in [start, start.deletingLastPathComponent()] {
            let manifest = candidate.appendingPathComponent("Package.swift").path
            if let text = try? String(contentsOfFile: manifest, encoding: .utf8), text.contains(beginMarker) {
                if candidate != start, start.lastPathComponent != "modules" { continue }
                guard text.contains("let modules: [String]") else {
                    throw ScaffoldingError("not_an_agent", "this Package.swift keeps its modules in another form (is it the runtime's own package?); add-agent-module works in agents made by create-agent", path: manifest)
                }
                return candidate.path
            }
        }
        throw ScaffoldingError("not_an_agent", "not an agent folder: no Package.swift with the \(beginMarker) marker here or above modules/; create one with create-agent, or cd into the agent", path: start.path)
    }

    /// Why `name` cannot name a module, or nil. A Python module's name only names a folder and
    /// its process types, so the Swift rules (keywords, imported libraries, target suffixes) do
    /// not apply to it.
    public static func nameProblem(_ name: String, language: ModuleLanguage = .swift) -> String? {
        if name.isEmpty { return "a module name must not be empty" }
        if name.count > 64 { return "a module name must be at most 64 characters long" }
        let scalars = Array(name.unicodeScalars)
        let letter: (Unicode.Scalar) -> Bool = { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }
        guard letter(scalars[0]), scalars.allSatisfy({ letter($0) || $0 == "_" || ("0"..."9").contains($0) }) else {
            let names = language == .swift ? "a folder, a Swift module and lib\(name).so" : "a folder and the prefix of its process types"
            return "\"\(name)\" is not a valid module name: use letters, digits and '_', starting with a letter (it names \(names))"
        }
        if language == .python { return nil }
        if swiftKeywords.contains(name) { return "\"\(name)\" is a Swift keyword; choose another name" }
        if reserved.contains(name.lowercased()) { return "\"\(name)\" is taken by a library the module imports; choose another name" }
        if name.hasSuffix("Tests") || name.hasSuffix("Entry") { return "a module name must not end in Tests or Entry (those name its test and entry targets)" }
        return nil
    }

    static let swiftKeywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "func", "import", "init", "inout", "let", "operator",
        "protocol", "struct", "subscript", "typealias", "var", "break", "case", "continue", "default", "defer", "do",
        "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch", "where", "while", "as", "catch",
        "false", "is", "nil", "rethrows", "super", "self", "Self", "throw", "throws", "true", "try", "Any", "some", "any",
    ]
    static let reserved: Set<String> = ["agentmodulekit", "agentmoduleabi", "cagentmodulekit", "foundation", "swift", "glibc", "dispatch", "testing", "xctest",
                                        "sdk", "synchronization"]

    /// `weather_station` → `WeatherStation`.
    static func typePrefix(_ name: String) -> String {
        name.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The module the runtime provides itself (the `chatbot` process type).
    static let builtinModule = "chat"

    /// Why `name` would stand in for a module the agent finds elsewhere, or nil: the runtime's
    /// built-in `chat`, or a library in `folders` (the runtime's own modules beside its commands,
    /// `AGENT_MODULE_PATH`). An agent's own `modules/NAME` comes first when a name is looked up,
    /// so it would hide that module, and the settings made for it (create-agent's `system` and
    /// `sample` processes) would no longer be valid.
    public static func takenProblem(_ name: String, folders: [String]) -> String? {
        if name == builtinModule { return "\"\(name)\" is the runtime's built-in module (the chatbot process type); choose another name" }
        if name.lowercased() == builtinModule {
            return "\"\(name)\" differs only in the case of its letters from the runtime's built-in module \"\(builtinModule)\" (the chatbot process type); choose another name"
        }
        for folder in folders {
            guard let found = sameName(name, in: folder) else { continue }
            if found == name {
                return "\"\(name)\" is a module the agent already finds in \(folder); an agent's own module of that name would hide it "
                    + "(and break the settings of its processes): choose another name"
            }
            return "\"\(name)\" differs only in the case of its letters from the module \"\(found)\" the agent finds in \(folder): "
                + "two such names are told apart in settings by case alone (and are one file on a case-insensitive disk); choose another name"
        }
        return nil
    }

    /// The module in `folder` (`libNAME.so`, or `NAME/module.json`) whose name equals `name`
    /// ignoring case: exactly `name` if there is one.
    static func sameName(_ name: String, in folder: String) -> String? {
        if FileManager.default.fileExists(atPath: "\(folder)/lib\(name).so") || FileManager.default.fileExists(atPath: "\(folder)/\(name)/module.json") {
            return name
        }
        let wanted = name.lowercased()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            if entry.hasPrefix("lib"), entry.hasSuffix(".so") {
                let module = String(entry.dropFirst(3).dropLast(3))
                if module.lowercased() == wanted { return module }
            } else if entry.lowercased() == wanted, FileManager.default.fileExists(atPath: "\(folder)/\(entry)/module.json") {
                return entry
            }
        }
        return nil
    }

    /// Where the agent finds modules besides its own: the runtime's commands' folder and `AGENT_MODULE_PATH`.
    func moduleFolders(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        [home.binaries] + (environment["AGENT_MODULE_PATH"] ?? "").split(separator: ":").map(String.init)
    }

    public func add(_ name: String, empty: Bool = false, language: ModuleLanguage = .swift, in directory: String,
                    enable: Bool = true) throws(ScaffoldingError) -> Result {
        if let problem = Self.nameProblem(name, language: language) { throw ScaffoldingError("bad_name", problem) }
        if let problem = Self.takenProblem(name, folders: moduleFolders()) { throw ScaffoldingError("bad_name", problem) }
        if language == .python, empty {
            throw ScaffoldingError("bad_option", "--empty writes compiling Swift skeletons; a Python module has none (its programs are a few lines each): leave out --empty")
        }
        let root = try Self.agentRoot(from: directory)
        let moduleFolder = root + "/modules/" + name
        if FileManager.default.fileExists(atPath: moduleFolder) {
            throw ScaffoldingError("module_exists", "module \"\(name)\" exists already; nothing was written (remove the folder first to start over)", path: moduleFolder)
        }
        if let other = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/modules")) ?? []).first(where: { $0.lowercased() == name.lowercased() }) {
            throw ScaffoldingError("module_exists", "module \"\(name)\" differs only in the case of its letters from the agent's module \"\(other)\"; nothing was written (choose another name)",
                                   path: root + "/modules/" + other)
        }
        let context = ["name": name, "Name": Self.typePrefix(name)]
        switch language {
        case .swift:
            // Read and check Package.swift before anything is written.
            let listing = try PackageListing(root: root, module: name)
            let files = try TemplateSet(folder: home.templates + (empty ? "/module-empty" : "/module")).render(context)
            let written = try FileWriter.write(files, into: moduleFolder, force: false)
            let listed = try listing.apply()
            return finish(name, root: root, moduleFolder: moduleFolder, written: written, edits: listed.map { [$0] } ?? [],
                          enable: enable, adapter: empty ? nil : "\(name).\(name)_adapter")
        case .python:
            var files = try TemplateSet(folder: home.templates + "/module-python").render(context)
            files.append(("agentruntime.py", try pythonSDK()))
            let written = try FileWriter.write(files.sorted { $0.path < $1.path }, into: moduleFolder, force: false)
            return finish(name, root: root, moduleFolder: moduleFolder, written: written, edits: [],
                          enable: enable, adapter: "\(name).\(name)_adapter")
        }
    }

    private func finish(_ name: String, root: String, moduleFolder: String, written: [String], edits: [String],
                        enable: Bool, adapter: String?) -> Result {
        var edits = edits
        var notes: [String] = []
        if enable {
            let outcome = enableInSettings(root: root, module: name, template: moduleFolder + "/settings_template.json", adapter: adapter)
            edits += outcome.edits
            notes += outcome.notes
        }
        return Result(agentDirectory: root, files: written.map { "modules/\(name)/\($0)" }, edits: edits, notes: notes)
    }

    /// The Python SDK's one file, copied into each Python module so that it runs wherever the
    /// module is, with no path to set (the protocol it speaks is versioned: jsonl/1).
    private func pythonSDK() throws(ScaffoldingError) -> String {
        let path = home.sdk + "/Python/agentruntime.py"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ScaffoldingError("templates_missing", "cannot read the Python SDK; is the runtime's SDK/ complete?", path: path)
        }
        return text
    }

    /// The agent's Package.swift and the edit that lists a Swift module in it.
    private struct PackageListing {
        var path: String
        var manifest: String
        var module: String

        init(root: String, module: String) throws(ScaffoldingError) {
            path = root + "/Package.swift"
            self.module = module
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ScaffoldingError("not_an_agent", "cannot read Package.swift", path: path)
            }
            guard let begin = text.range(of: ModuleAdder.beginMarker), let end = text.range(of: ModuleAdder.endMarker), begin.upperBound <= end.lowerBound else {
                throw ScaffoldingError("not_an_agent", "the \(ModuleAdder.beginMarker) / \(ModuleAdder.endMarker) markers are missing or out of order", path: path)
            }
            manifest = text
        }

        /// Lists the module between the markers unless it is there; the edit made, or nil.
        func apply() throws(ScaffoldingError) -> String? {
            var manifest = self.manifest
            guard let begin = manifest.range(of: ModuleAdder.beginMarker), let end = manifest.range(of: ModuleAdder.endMarker) else { return nil }
            if manifest[begin.upperBound..<end.lowerBound].contains("\"\(module)\"") { return nil }
            let lineStart = manifest[..<end.lowerBound].lastIndex(of: "\n").map { manifest.index(after: $0) } ?? end.lowerBound
            manifest.insert(contentsOf: "    \"\(module)\",\n", at: lineStart)
            try ScaffoldFiles.write(manifest, to: path, keepMode: true)
            return "Package.swift: listed module \"\(module)\""
        }
    }

    /// Adds the module to `enabled_modules` and the template's processes and tasks to settings.json,
    /// editing the file in place: everything else keeps its formatting (see
    /// ``JSONTextEditor``).
    private func enableInSettings(root: String, module: String, template: String, adapter: String?) -> (edits: [String], notes: [String]) {
        let path = root + "/settings.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            return ([], ["no settings.json: copy the processes of modules/\(module)/settings_template.json into your settings"])
        }
        guard var editor = try? JSONTextEditor(bytes: Array(data)), case .object(let settings) = editor.value,
              case .object(let templateObject)? = try? JSONValue.parse(FileManager.default.contents(atPath: template) ?? Data())
        else {
            return ([], ["settings.json is not a valid settings object, left as it is: add \"\(module)\" to enabled_modules and the processes of modules/\(module)/settings_template.json by hand"])
        }
        var edits: [String] = []
        var notes: [String] = []
        do throws(JSONEditError) {
            switch settings["enabled_modules"] {
            case .array(let enabled)?:
                if !enabled.contains(.string(module)) {
                    try editor.append(.string(module), toArrayAt: "/enabled_modules")
                    edits.append("settings.json: enabled module \"\(module)\"")
                }
            case nil:
                try editor.setMember("enabled_modules", to: [.string(module)], inObjectAt: "")
                edits.append("settings.json: enabled module \"\(module)\"")
            default:
                notes.append("settings.json's enabled_modules is not an array, left as it is: add \"\(module)\" to it by hand")
            }
            let templateProcesses = templateObject["processes"]?.objectValue ?? [:]
            var processes = settings["processes"]?.objectValue
            if processes == nil, settings["processes"] == nil {
                try editor.setMember("processes", to: .object([:]), inObjectAt: "")
                processes = [:]
            }
            if var processes {
                for (name, value) in templateProcesses {
                    if processes[name] != nil {
                        notes.append("settings.json already has a process \"\(name)\"; the template's was not added")
                    } else {
                        try editor.setMember(name, to: value, inObjectAt: "/processes")
                        processes[name] = value
                        edits.append("settings.json: added process \"\(name)\" (\(value["type"]?.stringValue ?? "?"))")
                    }
                }
                // The module's logic adapter joins every chatbot of the agent.
                if let adapter {
                    for (name, value) in processes where value["type"]?.stringValue == "chatbot" {
                        guard let adapters = value["logic_adapters"]?.arrayValue, !adapters.contains(.string(adapter)) else { continue }
                        try editor.append(.string(adapter), toArrayAt: "/processes/\(JSONPointer.escape(name))/logic_adapters")
                        edits.append("settings.json: added logic adapter \"\(adapter)\" to chatbot \"\(name)\"")
                    }
                }
            } else if !templateProcesses.isEmpty {
                notes.append("settings.json's processes is not an object, left as it is: add the processes of modules/\(module)/settings_template.json by hand")
            }
            // The template's tasks (a module's task handlers), added the same way.
            let templateTasks = templateObject["tasks"]?.objectValue ?? [:]
            if !templateTasks.isEmpty {
                switch settings["tasks"] {
                case nil:
                    try editor.setMember("tasks", to: .object([:]), inObjectAt: "")
                    fallthrough
                case .object?:
                    let existing = settings["tasks"]?.objectValue ?? [:]
                    for (name, value) in templateTasks {
                        if existing[name] != nil {
                            notes.append("settings.json already has a task \"\(name)\"; the template's was not added")
                        } else {
                            try editor.setMember(name, to: value, inObjectAt: "/tasks")
                            edits.append("settings.json: added task \"\(name)\" (\(value["type"]?.stringValue ?? "?"))")
                        }
                    }
                default:
                    notes.append("settings.json's tasks is not an object, left as it is: add the tasks of modules/\(module)/settings_template.json by hand")
                }
            }
        } catch {
            return ([], ["cannot edit settings.json (\(error)); it was left as it is"])
        }
        guard !edits.isEmpty else { return (edits, notes) }
        do {
            try Self.replaceContents(of: path, with: editor.bytes)
        } catch {
            return ([], ["cannot update settings.json: \(error)"])
        }
        return (edits, notes)
    }

    /// Writes a file whole and renames it over the old one, keeping the old one's mode.
    static func replaceContents(of path: String, with bytes: [UInt8]) throws {
        try ScaffoldFiles.write(bytes: bytes, to: path, keepMode: true)
    }
}
