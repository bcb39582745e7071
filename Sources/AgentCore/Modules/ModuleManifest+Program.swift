import Foundation
import JSONSchema

extension ModuleManifest {
    /// The file that makes a folder a `jsonl/1` module: `modules/NAME/module.json`.
    public static let programManifestName = "module.json"
    /// The largest manifest read, in bytes: it is data from the module's author, read with
    /// the distrust a library's manifest gets.
    public static let programManifestLimit = 256 << 10
    /// The deepest nesting a manifest may have (its schemas included).
    public static let programManifestDepth = 64

    /// Whether `path` (a module's `library` as located) is a `jsonl/1` module's manifest.
    public static func isProgramManifest(_ path: String) -> Bool {
        path.hasSuffix("/" + programManifestName)
    }

    /// Reads a `jsonl/1` module's manifest as data (nothing in it is executed): at most
    /// ``programManifestLimit`` bytes, nested at most ``programManifestDepth`` deep, every
    /// schema compiled. Every problem is reported with its JSON pointer, what was expected and
    /// what was found.
    public init(programManifest file: String, module: String) throws(ModuleLoadError) {
        let bytes = try Self.readBounded(file, module: module)
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest is not valid JSON: \(error.pointer.isEmpty ? "" : "\(error.pointer): ")\(error); fix \(file)")
        }
        if let pointer = Self.tooDeep(value, limit: Self.programManifestDepth) {
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest is invalid: \(pointer): expected at most \(Self.programManifestDepth) levels of nesting, found more; fix \(file)")
        }
        var reader = ProgramManifestReader(module: module)
        let processes = reader.read(value)
        guard reader.problems.isEmpty else {
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest is invalid: " + reader.problems.joined(separator: "; ") + "; fix \(file)")
        }
        self.init(name: module, version: value["version"]?.stringValue ?? "", processes: processes,
                  directory: (file as NSString).deletingLastPathComponent)
    }

    /// The file's bytes, refused when it is not a regular file or larger than the limit.
    private static func readBounded(_ file: String, module: String) throws(ModuleLoadError) -> [UInt8] {
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw ModuleLoadError(.notFound, module: module, file: file, "cannot read the manifest: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ModuleLoadError(.notAFile, module: module, file: file, "the manifest is not a regular file")
        }
        guard info.st_size <= programManifestLimit else {
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest is invalid: expected at most \(programManifestLimit) bytes, found \(info.st_size); a manifest declares types, commands and schemas, nothing big")
        }
        var bytes = [UInt8](repeating: 0, count: programManifestLimit + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        guard count <= programManifestLimit else {
            throw ModuleLoadError(.invalidManifest, module: module, file: file, "the manifest is invalid: expected at most \(programManifestLimit) bytes, found more")
        }
        return Array(bytes[0..<count])
    }

    /// The pointer of the first value nested deeper than `limit`, or nil.
    static func tooDeep(_ value: JSONValue, limit: Int, at pointer: String = "") -> String? {
        guard limit >= 0 else { return pointer }
        switch value {
        case .object(let object):
            for (key, member) in object {
                if let found = tooDeep(member, limit: limit - 1, at: pointer + "/" + JSONPointer.escape(key)) { return found }
            }
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = tooDeep(item, limit: limit - 1, at: pointer + "/\(index)") { return found }
            }
        default:
            break
        }
        return nil
    }
}
