import AgentCore
import Foundation
import Testing

/// Which mappings the start's page release (``CleanFilePages``, run by agent-control, the fork
/// server and each worker) gives back: only file mappings whose every page is still the file's.
/// On smaps text, then on real mappings of this process: a dropped page reads the same at its
/// next touch, a written page (relocated data made read-only afterwards, as RELRO is) is kept.
@Suite(.serialized) struct StartPagesMappingTests {
    static let executable = "/opt/agent/bin/agent-control"

    static func smaps(_ permissions: String, anonymous: Int, swap: Int, path: String = executable) -> [UInt8] {
        Array("""
        55d0c0000000-55d0c0004000 \(permissions) 00000000 fd:01 1234                       \(path)
        Size:                 16 kB
        Rss:                  16 kB
        Anonymous:            \(anonymous) kB
        Swap:                 \(swap) kB
        SwapPss:              \(swap) kB
        """.utf8)
    }

    @Test func aSwappedOutCopyCountsAsWrittenLikeAResidentOne() {
        let swapped = CleanFilePages.fileMappings(in: Self.smaps("r--p", anonymous: 0, swap: 8))
        #expect(swapped.count == 1 && swapped[0].copiedKB == 8 && !swapped[0].isClean, "a relocated page swapped out shows under Swap:, and must keep the mapping")
        let resident = CleanFilePages.fileMappings(in: Self.smaps("r--p", anonymous: 4, swap: 0))
        #expect(resident.count == 1 && resident[0].copiedKB == 4 && !resident[0].isClean)
        let clean = CleanFilePages.fileMappings(in: Self.smaps("r-xp", anonymous: 0, swap: 0))
        #expect(clean.count == 1 && clean[0].isClean && clean[0].path == Self.executable)
        #expect(clean.first?.start == 0x55d0c0000000 && clean.first?.end == 0x55d0c0004000)
    }

    @Test func librariesCountWritableMappingsAndAnonymousMemoryDoNot() {
        let library = CleanFilePages.fileMappings(in: Self.smaps("r-xp", anonymous: 0, swap: 0, path: "/usr/lib/libc.so.6"))
        #expect(library.count == 1 && library[0].isClean && library[0].path == "/usr/lib/libc.so.6")
        let data = CleanFilePages.fileMappings(in: Self.smaps("rw-p", anonymous: 0, swap: 0))
        #expect(data.count == 1 && data[0].writable && !data[0].isClean)
        #expect(CleanFilePages.fileMappings(in: Self.smaps("r--p", anonymous: 0, swap: 0, path: "[vvar]")).isEmpty)
        #expect(CleanFilePages.fileMappings(in: Array("7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \nRss: 4 kB\n".utf8)).isEmpty)
    }

    static let pageCount = 64

    /// RSS and Anonymous kB of this process's mapping that starts at `address`, from smaps.
    static func resident(at address: UnsafeMutableRawPointer) throws -> (rss: Int, anonymous: Int) {
        // Read to its end: String(contentsOfFile:) stops short of a /proc file's end.
        let smaps = String(decoding: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps")).readToEnd() ?? Data(), as: UTF8.self)
        let start = String(UInt(bitPattern: address), radix: 16)
        var inMapping = false
        var found: (rss: Int, anonymous: Int) = (-1, -1)
        for line in smaps.split(separator: "\n") {
            let first = line.prefix { $0 != " " }
            if !first.hasSuffix(":") {
                if inMapping { break }
                inMapping = first.split(separator: "-").first.map(String.init) == start
                if inMapping { found = (0, 0) }
                continue
            }
            guard inMapping, let kB = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }) else { continue }
            if first == "Rss:" { found.rss = kB }
            if first == "Anonymous:" { found.anonymous = kB }
        }
        return found
    }

    /// A file of `pageCount` pages, each filled with its index, mapped privately read-only
    /// (`written`: read-write, a byte of each page changed, then made read-only).
    static func mapFile(written: Bool) throws -> (UnsafeMutableRawPointer, Int) {
        let size = pageCount * Int(getpagesize())
        let path = NSTemporaryDirectory() + "clean-pages-\(getpid())-\(UUID().uuidString)"
        var bytes = [UInt8](repeating: 0, count: size)
        for page in 0..<pageCount { bytes[page * Int(getpagesize())] = UInt8(page) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        defer { close(fd); unlink(path) }
        let protection = written ? PROT_READ | PROT_WRITE : PROT_READ
        let address = try #require(mmap(nil, size, protection, MAP_PRIVATE, fd, 0).flatMap { $0 == MAP_FAILED ? nil : $0 })
        for page in 0..<pageCount {
            let byte = address.load(fromByteOffset: page * Int(getpagesize()), as: UInt8.self)
            if written { address.storeBytes(of: byte &+ 100, toByteOffset: page * Int(getpagesize()), as: UInt8.self) }
        }
        if written { mprotect(address, size, PROT_READ) }
        return (address, size)
    }

    @Test func pagesStillTheFilesAreDroppedAndReadTheSameAgain() throws {
        let (address, size) = try Self.mapFile(written: false)
        defer { munmap(address, size) }
        #expect(try Self.resident(at: address).rss == size / 1024)
        let outcome = CleanFilePages.release()
        #expect(outcome.problem == nil && outcome.bytes >= size, "released \(outcome.bytes) bytes; \(outcome.problem ?? "")")
        #expect(try Self.resident(at: address).rss == 0)
        for page in 0..<Self.pageCount {
            #expect(address.load(fromByteOffset: page * Int(getpagesize()), as: UInt8.self) == UInt8(page))
        }
    }

    @Test func aMappingWithWrittenPagesIsKeptWhole() throws {
        let (address, size) = try Self.mapFile(written: true)
        defer { munmap(address, size) }
        _ = CleanFilePages.release()
        let after = try Self.resident(at: address)
        #expect(after.anonymous == size / 1024 && after.rss == size / 1024)
        for page in 0..<Self.pageCount {
            #expect(address.load(fromByteOffset: page * Int(getpagesize()), as: UInt8.self) == UInt8(page) &+ 100, "page \(page) lost what was written")
        }
    }
}
