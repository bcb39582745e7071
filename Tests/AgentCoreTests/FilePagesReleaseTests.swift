import AgentCore
import CAgentSystem
import Foundation
import Testing

/// `agent_release_file_pages` gives back the pages of private file mappings that were never
/// written, and keeps every mapping with a page of its own (copied on write) whole.
@Suite(.serialized) struct FilePagesReleaseTests {
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    static let pages = 16

    /// A temporary file of `pages` pages, page i filled with the byte i + 1.
    static func makeFile() throws -> (path: String, fd: Int32) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("file-pages-\(UUID().uuidString)").path
        var bytes: [UInt8] = []
        for page in 0..<pages { bytes += [UInt8](repeating: UInt8(page + 1), count: pageSize) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        return (path, fd)
    }

    /// Maps the file privately and reads every page (resident afterwards).
    static func mapAndTouch(_ fd: Int32, protection: Int32) throws -> UnsafeMutablePointer<UInt8> {
        guard let raw = mmap(nil, pages * pageSize, protection, MAP_PRIVATE, fd, 0), raw != MAP_FAILED else { throw POSIXError(.ENOMEM) }
        let bytes = raw.assumingMemoryBound(to: UInt8.self)
        var sum = 0
        for page in 0..<pages { sum += Int(bytes[page * pageSize]) }
        #expect(sum == (1...pages).reduce(0, +))
        return bytes
    }

    /// Resident kB of the mapping that starts at `address`, from /proc/self/smaps.
    static func residentKB(at address: UnsafeMutablePointer<UInt8>) throws -> Int {
        let start = String(UInt(bitPattern: address), radix: 16)
        // ProcFile reads to the end: Foundation's String(contentsOfFile:) stops short on /proc.
        guard let smaps = ProcFile.read("/proc/self/smaps") else { throw POSIXError(.EIO) }
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), !line.prefix(upTo: dash).contains(":"), line.prefix(upTo: dash).allSatisfy(\.isHexDigit) {
                inside = line.prefix(upTo: dash) == start
            } else if inside, line.hasPrefix("Rss:") {
                if let kB = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }) { return kB }
            }
        }
        throw POSIXError(.ENOENT)
    }

    @Test func neverWrittenMappingsAreUnmappedAndReadTheFileAgain() throws {
        let (path, fd) = try Self.makeFile()
        defer { close(fd); unlink(path) }
        let clean = try Self.mapAndTouch(fd, protection: PROT_READ)
        defer { munmap(clean, Self.pages * Self.pageSize) }
        #expect(try Self.residentKB(at: clean) == Self.pages * Self.pageSize / 1024)

        var problem: Int32 = -1
        let released = agent_release_file_pages(&problem)
        #expect(problem == 0)
        #expect(released >= Self.pages * Self.pageSize)
        #expect(try Self.residentKB(at: clean) == 0, "the clean mapping's pages are no longer mapped")
        // Touched again, each page is the file's.
        for page in 0..<Self.pages { #expect(clean[page * Self.pageSize + 7] == UInt8(page + 1)) }
    }

    @Test func aMappingWithACopiedPageKeepsItsContent() throws {
        let (path, fd) = try Self.makeFile()
        defer { close(fd); unlink(path) }
        // Read-only now, but written once (as relocated data is): its copy must survive.
        let relocated = try Self.mapAndTouch(fd, protection: PROT_READ | PROT_WRITE)
        defer { munmap(relocated, Self.pages * Self.pageSize) }
        relocated[3 * Self.pageSize] = 0xAB
        #expect(mprotect(relocated, Self.pages * Self.pageSize, PROT_READ) == 0)
        // Writable and written: never a candidate.
        let data = try Self.mapAndTouch(fd, protection: PROT_READ | PROT_WRITE)
        defer { munmap(data, Self.pages * Self.pageSize) }
        data[5 * Self.pageSize] = 0xCD

        var problem: Int32 = -1
        _ = agent_release_file_pages(&problem)
        #expect(problem == 0)
        #expect(relocated[3 * Self.pageSize] == 0xAB)
        #expect(data[5 * Self.pageSize] == 0xCD)
        #expect(try Self.residentKB(at: relocated) == Self.pages * Self.pageSize / 1024, "a written mapping keeps every page mapped")
    }
}
