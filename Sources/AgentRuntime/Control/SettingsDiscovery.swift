import Foundation

/// Finds an agent's `settings.json` the way git finds its repository: in the current folder,
/// else in the nearest parent folder that has one.
public enum SettingsDiscovery {
    public static let fileName = "settings.json"

    /// The first `settings.json` that is a regular file (or a link to one) in `directory` or
    /// one of its parents, as an absolute path; nil when there is none up to `/`.
    public static func find(from directory: String) -> String? {
        var folder = URL(fileURLWithPath: directory).standardizedFileURL
        while true {
            let candidate = folder.appendingPathComponent(fileName).path
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return candidate }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { return nil }
            folder = parent
        }
    }
}

/// No `settings.json` in the folder a command ran in nor in any parent folder.
public struct SettingsNotFoundError: Error, CustomStringConvertible, Sendable {
    public let code = "settings_not_found"
    /// Where the search started.
    public var directory: String

    public init(directory: String) { self.directory = directory }

    public var description: String {
        "no settings.json here (\(directory)) or in any parent folder; pass --settings FILE or -C AGENT_FOLDER, or create an agent with create-agent"
    }
}
