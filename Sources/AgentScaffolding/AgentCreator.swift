import Foundation

/// `create-agent`: writes a ready agent (README.md, settings.json, Package.swift, modules/,
/// .gitignore, and its systemd unit `agentruntime-<name>.service`) into a folder.
public struct AgentCreator {
    public var home: RuntimeHome

    public init(home: RuntimeHome) { self.home = home }

    /// What was created, file by file (relative to the agent's folder).
    public struct Result: Sendable {
        public var directory: String
        public var name: String
        public var files: [String]
        /// What was left out and why (each a sentence saying what to do).
        public var notes: [String] = []
    }

    /// Creates the agent in `directory` (made if missing). `name` defaults to the folder's name.
    public func create(in directory: String, name: String? = nil, force: Bool = false) throws(ScaffoldingError) -> Result {
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        let agentName = name ?? URL(fileURLWithPath: root).lastPathComponent
        guard !agentName.isEmpty, agentName != "/" else {
            throw ScaffoldingError("bad_name", "cannot name an agent after \(root); pass --name NAME")
        }
        // A control character would be written into the agent's files and printed raw.
        if let bad = [(agentName, "name"), (root, "folder")].first(where: { $0.0.unicodeScalars.contains { $0.properties.generalCategory == .control } }) {
            throw ScaffoldingError("bad_name", "the agent's \(bad.1) \(bad.0.debugDescription) has a control character; choose one without", path: root)
        }
        // The systemd unit, as `agent-control unit` prints it for this folder (left out for a
        // folder whose path the unit could not hold as it is; the README says how to make one).
        let unit = ServiceUnit(agentName: agentName, agentDirectory: root, binaries: home.binaries)
        let context = [
            "agentName": agentName,
            "packageName": Self.packageName(agentName),
            "sdkPath": home.sdk,
            "runtimeHome": home.path,
            "unitFile": unit.fileName,
        ]
        var files = try TemplateSet(folder: home.templates + "/agent").render(context)
        if unit.problems.isEmpty { files.append((unit.fileName, unit.text)) }
        var written = try FileWriter.write(files, into: root, force: force)
        let modules = root + "/modules"
        if !FileManager.default.fileExists(atPath: modules) {
            try ScaffoldFiles.makeDirectories(modules)
            written.append("modules/")
        }
        var notes: [String] = []
        if !unit.problems.isEmpty {
            notes.append("no systemd unit was written: " + unit.problems.joined(separator: "; ")
                         + " (`agent-control unit` prints one for a folder it can hold)")
        }
        return Result(directory: root, name: agentName, files: written, notes: notes)
    }

    /// `path` as a shell reads it back: as it is when it needs no quoting, else in single quotes.
    public static func shellWord(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "/._-+:@,=".unicodeScalars.contains($0) }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A SwiftPM package name from any agent name: letters, digits, `-`, `_`.
    static func packageName(_ name: String) -> String {
        let cleaned = String(name.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" ? Character($0) : "-" })
        return cleaned.isEmpty ? "agent" : cleaned
    }
}
