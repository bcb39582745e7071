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
    /// Checks first, then writes all: either every file is written or none is (but for a
    /// rename that fails, which nothing here provokes).
    static func write(_ files: [(path: String, content: String)], into root: String, force: Bool) throws(ScaffoldingError) -> [String] {
        let manager = FileManager.default
        let existing = files.map { root + "/" + $0.path }.filter { manager.fileExists(atPath: $0) }
        if !existing.isEmpty, !force {
            throw ScaffoldingError("would_overwrite", "these files exist already: \(existing.joined(separator: ", ")); nothing was written (pass --force to overwrite them)", path: root)
        }
        // A name the folder cannot hold fails before anything is written (NAME_MAX).
        for file in files {
            if let long = file.path.split(separator: "/").first(where: { $0.utf8.count > 255 }) {
                throw ScaffoldingError("name_too_long", "the name \(long.prefix(40))… is \(long.utf8.count) bytes, more than a file name may have (255); nothing was written: use a shorter name",
                                       path: root + "/" + file.path)
            }
        }
        // Every file to a temporary beside it first: one that cannot be written (a name too long
        // for the folder) leaves nothing behind, not the files before it.
        var folders: [String] = []
        var temporaries: [(temporary: String, target: String)] = []
        do throws(ScaffoldingError) {
            for file in files {
                let target = root + "/" + file.path
                folders += try ScaffoldFiles.makeDirectories(URL(fileURLWithPath: target).deletingLastPathComponent().path)
                temporaries.append((try ScaffoldFiles.writeBeside(bytes: Array(file.content.utf8), for: target), target))
            }
        } catch {
            for written in temporaries { unlink(written.temporary) }
            for folder in folders.reversed() { rmdir(folder) }
            throw error
        }
        for (index, written) in temporaries.enumerated() {
            do throws(ScaffoldingError) {
                try ScaffoldFiles.put(written.temporary, at: written.target)
            } catch {
                for left in temporaries[(index + 1)...] { unlink(left.temporary) }
                throw error
            }
        }
        return files.map(\.path)
    }
}
