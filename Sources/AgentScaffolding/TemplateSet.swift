import Foundation
import Mustache

/// A folder of templates rendered with swift-mustache into files: `X.mustache` becomes `X`,
/// `gitignore` becomes `.gitignore`, and `__Name__` / `__name__` in paths are replaced.
public struct TemplateSet {
    public let folder: String
    /// Relative path (as written) → template.
    private let templates: [(path: String, template: MustacheTemplate)]

    public init(folder: String) throws(ScaffoldingError) {
        self.folder = folder
        guard let walker = FileManager.default.enumerator(atPath: folder) else {
            throw ScaffoldingError("templates_missing", "no templates here", path: folder)
        }
        var found: [(String, MustacheTemplate)] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".mustache") else { continue }
            let path = folder + "/" + relative
            do {
                let text = try String(contentsOfFile: path, encoding: .utf8)
                found.append((String(relative.dropLast(".mustache".count)), try MustacheTemplate(string: text)))
            } catch {
                throw ScaffoldingError("template_invalid", "cannot read or parse the template: \(error)", path: path)
            }
        }
        guard !found.isEmpty else { throw ScaffoldingError("templates_missing", "no .mustache templates here", path: folder) }
        templates = found.sorted { $0.0 < $1.0 }
    }

    /// The files this set renders for `context`: relative output path → content.
    public func render(_ context: [String: String]) -> [(path: String, content: String)] {
        templates.map { entry in
            var path = entry.path
            for (key, value) in context { path = path.replacingOccurrences(of: "__\(key)__", with: value) }
            let name = URL(fileURLWithPath: path).lastPathComponent
            if name == "gitignore" { path = String(path.dropLast(name.count)) + ".gitignore" }
            return (path, entry.template.render(context))
        }
    }
}

/// Writes rendered files, never over an existing file unless asked.
enum FileWriter {
    /// Checks first, then writes all: either every file is written or none is.
    static func write(_ files: [(path: String, content: String)], into root: String, force: Bool) throws(ScaffoldingError) -> [String] {
        let manager = FileManager.default
        let existing = files.map { root + "/" + $0.path }.filter { manager.fileExists(atPath: $0) }
        if !existing.isEmpty, !force {
            throw ScaffoldingError("would_overwrite", "these files exist already: \(existing.joined(separator: ", ")); nothing was written (pass --force to overwrite them)", path: root)
        }
        var written: [String] = []
        for file in files {
            let target = root + "/" + file.path
            try ScaffoldFiles.makeDirectories(URL(fileURLWithPath: target).deletingLastPathComponent().path)
            try ScaffoldFiles.write(file.content, to: target)
            written.append(file.path)
        }
        return written
    }
}
