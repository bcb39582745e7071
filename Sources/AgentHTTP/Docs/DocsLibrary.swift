import Foundation

/// The documents `/docs` serves: `README.md`, `docs/*.md`, `docs/reference/*.md` and
/// `benchmarks/README.md`, read from disk when asked for — from the checkout the agent was
/// built in (found above its executable), or from an installed copy
/// (`<prefix>/share/agentruntime`, where scripts/install.sh and the Debian package put them),
/// or from `AGENT_RUNTIME_HOME`. Not compiled into the binary: a megabyte of string literals
/// would cost every build of AgentHTTP, and each edit of a page a rebuild.
///
/// A page is only ever one of the files the folders list, looked up by a plain name
/// (``isPlainName(_:)``): no path a client sends reaches the filesystem.
struct DocsLibrary: Sendable {
    /// A document: its name in `/docs/NAME`, its file, its title (its first heading).
    struct Page: Sendable, Equatable {
        var name: String
        var path: String
    }

    /// The folder holding `README.md` and `docs/`; nil when none was found.
    let root: String?
    /// Where it was looked for, for the page that says it found none.
    let searched: [String]

    /// Pages larger than this are not rendered (the page says where the file is).
    static let maximumBytes = 2 << 20

    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                       executable: String = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]) -> DocsLibrary {
        var candidates: [String] = []
        if let home = environment["AGENT_RUNTIME_HOME"] { candidates.append(home) }
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for prefix in [folder.deletingLastPathComponent(), folder.deletingLastPathComponent().deletingLastPathComponent()] {
            candidates.append(prefix.appendingPathComponent("share/agentruntime").path)
        }
        while folder.path != "/" {
            candidates.append(folder.path)
            folder.deleteLastPathComponent()
        }
        // This runtime's documents only (their generated API reference is in every copy): not any
        // folder above the binary that happens to hold a README.md and a docs/ (a home folder).
        let root = candidates.first {
            FileManager.default.fileExists(atPath: $0 + "/README.md") && FileManager.default.fileExists(atPath: $0 + "/docs/reference/openapi.json")
        }
        return DocsLibrary(root: root, searched: candidates)
    }

    /// Every page, the README first (name ""), then the guides, the references and the figures.
    func pages() -> [Page] {
        guard let root else { return [] }
        var pages = [Page(name: "", path: root + "/README.md")]
        for (folder, prefix) in [("/docs", ""), ("/docs/reference", "reference/")] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: root + folder)) ?? []
            for file in files.sorted() where file.hasSuffix(".md") {
                let name = String(file.dropLast(3))
                if Self.isPlainName(name) { pages.append(Page(name: prefix + name, path: root + folder + "/" + file)) }
            }
        }
        if FileManager.default.fileExists(atPath: root + "/benchmarks/README.md") {
            pages.append(Page(name: "benchmarks", path: root + "/benchmarks/README.md"))
        }
        return pages
    }

    /// The page named `name` (`""`, `tasks`, `reference/settings`, `benchmarks`), if there is one.
    func page(_ name: String) -> Page? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard name.isEmpty || (parts.count <= 2 && parts.allSatisfy({ Self.isPlainName(String($0)) })) else { return nil }
        return pages().first { $0.name == name }
    }

    /// Lower-case letters, digits, `-` and `_`, starting with a letter or digit, at most 64.
    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 64,
              CharacterSet.lowercaseLetters.contains(first) || CharacterSet.decimalDigits.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }

    /// The `/docs` name of a page's file (its path from the root), if it is one.
    static func name(ofFile path: String) -> String? {
        if path == "README.md" { return "" }
        if path == "benchmarks/README.md" { return "benchmarks" }
        for prefix in ["docs/reference/", "docs/"] where path.hasPrefix(prefix) && path.hasSuffix(".md") {
            let name = String(path.dropFirst(prefix.count).dropLast(3))
            if isPlainName(name) { return (prefix == "docs/" ? "" : "reference/") + name }
        }
        return nil
    }

    /// Where a link of the page at `page` (its path from the root) goes on the dashboard: a
    /// web link as it is (http, https, mailto), a fragment, another page at `/docs/…`, the
    /// OpenAPI document at `/api/openapi.json`; nil for anything else (another scheme —
    /// `javascript:` —, a file that is not a page, a path out of the folder).
    static func href(_ target: String, from page: String) -> String? {
        let lowered = target.lowercased()
        if lowered.hasPrefix("https://") || lowered.hasPrefix("http://") || lowered.hasPrefix("mailto:") { return target }
        if target.hasPrefix("#") { return target }
        let (path, fragment) = target.firstIndex(of: "#").map { (String(target[..<$0]), String(target[$0...])) } ?? (target, "")
        guard !path.isEmpty, !path.hasPrefix("/"), !path.contains(":"), !path.contains("\\"), !path.contains("?") else { return nil }
        var segments = page.split(separator: "/").dropLast().map(String.init)
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
            switch segment {
            case ".", "": continue
            case "..":
                guard !segments.isEmpty else { return nil }
                segments.removeLast()
            default: segments.append(segment)
            }
        }
        let resolved = segments.joined(separator: "/")
        if resolved == "docs" { return "/docs" + fragment }
        if resolved == "docs/reference/openapi.json" { return "/api/openapi.json" }
        guard let name = name(ofFile: resolved) else { return nil }
        return (name.isEmpty ? "/docs" : "/docs/" + name) + fragment
    }
}
