import Foundation

/// A process's memory by what is mapped (from /proc/PID/smaps): the executable's code and
/// constants, its data, the Swift runtime, Foundation, SQLite, the C libraries, heap and
/// anonymous memory (malloc arenas, thread stacks, SQLite's page cache), the shared rings and
/// the store's files. NIO, the HTTP server and GRDB are linked into the executable: they are
/// in its code, and what they allocate in the heap.
struct MemoryMap {
    /// RSS and PSS in kB of one part.
    struct Part {
        var rssKB = 0
        var pssKB = 0
    }

    /// The parts in the order they are printed.
    static let order = ["executable code and constants", "executable data", "Swift runtime", "Foundation", "SQLite",
                        "C and C++ libraries", "heap, stacks and anonymous", "shared rings", "store files", "other"]

    private(set) var parts: [String: Part] = [:]

    /// Reads /proc/PID/smaps; nil when the process is gone.
    init?(pid: Int32) {
        guard let text = ProcFiles.read("/proc/\(pid)/smaps") else { return nil }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
        // Each mapping's header, then its RSS, PSS and anonymous (copied-on-write) kB.
        var mappings: [(header: Substring, part: Part, anonymousKB: Int)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                mappings.append((line, Part(), 0))
            } else if !mappings.isEmpty {
                if line.hasPrefix("Rss:") { mappings[mappings.count - 1].part.rssKB += Self.kilobytes(line) }
                if line.hasPrefix("Pss:") { mappings[mappings.count - 1].part.pssKB += Self.kilobytes(line) }
                if line.hasPrefix("Anonymous:") { mappings[mappings.count - 1].anonymousKB += Self.kilobytes(line) }
            }
        }
        for mapping in mappings {
            let name = Self.part(mappingLine: mapping.header, executable: executable, anonymousKB: mapping.anonymousKB)
            parts[name, default: Part()].rssKB += mapping.part.rssKB
            parts[name, default: Part()].pssKB += mapping.part.pssKB
        }
    }

    /// Which part a mapping belongs to, from its header line (`start-end perms offset dev inode
    /// path`): of the executable, a mapping never written (no anonymous page) is code and
    /// constants; its writable data and its relocated read-only data (RELRO) are data.
    static func part(mappingLine line: Substring, executable: String, anonymousKB: Int) -> String {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        let permissions = fields.count > 1 ? fields[1] : ""
        let path = fields.count > 5 ? fields[5].trimmingCharacters(in: .whitespaces) : ""
        let name = path.split(separator: "/").last.map(String.init) ?? path
        switch true {
        case !executable.isEmpty && path == executable:
            return permissions.contains("w") || anonymousKB > 0 ? "executable data" : "executable code and constants"
        case name.hasPrefix("libswift") || name.hasPrefix("libdispatch") || name.hasPrefix("libBlocksRuntime"):
            return "Swift runtime"
        case name.hasPrefix("libFoundation") || name.hasPrefix("lib_FoundationICU"):
            return "Foundation"
        case name.hasPrefix("libsqlite3"):
            return "SQLite"
        case name.hasPrefix("libc.") || name.hasPrefix("libstdc++") || name.hasPrefix("libm.") || name.hasPrefix("libgcc_s") || name.hasPrefix("ld-linux"):
            return "C and C++ libraries"
        case path.isEmpty || path.hasPrefix("[heap]") || path.hasPrefix("[stack") || path.hasPrefix("[anon"):
            return "heap, stacks and anonymous"
        case path.hasPrefix("/memfd:agent-ring"):
            return "shared rings"
        case name.hasPrefix("agent.sqlite"):
            return "store files"
        default:
            return "other"
        }
    }

    private static func kilobytes(_ line: Substring) -> Int {
        line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
    }
}
