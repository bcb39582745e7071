import AgentCore
import AgentTestSupport
import CAgentSystem
import Foundation
import Testing

/// `agent_release_file_pages` gives back the pages of the loaded objects' read-only segments,
/// and keeps a segment with a page copied on write (a breakpoint, a relocation) whole.
@Suite(.ownThreads, .serialized) struct FilePagesReleaseTests {
    /// zlib: on every Debian system, and loaded by nothing else in the test process, so that no
    /// other test touches its code meanwhile.
    static let library = "libz.so.1"

    /// Resident and copied-on-write kB of the library's code mappings, from /proc/self/smaps.
    struct Code {
        var start = 0
        var end = 0
        var residentKB = 0
        var anonymousKB = 0
    }

    static func code() throws -> Code {
        // ProcFile reads to the end: Foundation's String(contentsOfFile:) stops short on /proc.
        guard let smaps = ProcFile.read("/proc/self/smaps") else { throw POSIXError(.EIO) }
        var code = Code()
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, !first.hasSuffix(":") {
                inside = fields.count >= 6 && fields[5].contains("/libz.so") && fields[1].hasPrefix("r-x")
                if inside, let range = fields.first?.split(separator: "-"), range.count == 2,
                   let start = Int(range[0], radix: 16), let end = Int(range[1], radix: 16) {
                    code.start = code.start == 0 ? start : min(code.start, start)
                    code.end = max(code.end, end)
                }
            } else if inside, let kB = fields.dropFirst().first.flatMap({ Int($0) }) {
                if fields[0] == "Rss:" { code.residentKB += kB }
                if fields[0] == "Anonymous:" { code.anonymousKB += kB }
            }
        }
        guard code.end > code.start else { throw POSIXError(.ENOENT) }
        return code
    }

    /// Reads every page of the library's code; returns a checksum of its bytes.
    static func touch(_ code: Code) -> Int {
        let bytes = UnsafePointer<UInt8>(bitPattern: code.start)!
        var sum = 0
        for offset in stride(from: 0, to: code.end - code.start, by: 64) { sum &+= Int(bytes[offset]) &* (offset | 1) }
        return sum
    }

    @Test func readOnlySegmentsAreUnmappedAndReadAgainButACopiedPageKeepsItsSegment() throws {
        #expect(dlopen(Self.library, RTLD_NOW | RTLD_LOCAL) != nil, "\(String(cString: dlerror()))")
        var code = try Self.code()
        let checksum = Self.touch(code)
        let touchedKB = try Self.code().residentKB
        #expect(touchedKB * 1024 == code.end - code.start, "every page of its code mapped after the touch")

        var problem: Int32 = -1
        let released = agent_release_file_pages(&problem)
        #expect(problem == 0)
        #expect(released >= code.end - code.start)
        // Nothing else runs zlib's code: what is mapped now, another test may have touched.
        #expect(try Self.code().residentKB * 2 < touchedKB, "its code pages are no longer mapped")
        #expect(Self.touch(code) == checksum, "each page read again is the file's")

        // A page written as a debugger writes a breakpoint: copied on write, then read-only again.
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let target = UnsafeMutablePointer<UInt8>(bitPattern: code.start + page)!
        #expect(mprotect(UnsafeMutableRawPointer(target), page, PROT_READ | PROT_WRITE) == 0)
        let original = target.pointee
        target.pointee = original ^ 0xFF
        target.pointee = original
        #expect(mprotect(UnsafeMutableRawPointer(target), page, PROT_READ | PROT_EXEC) == 0)
        code = try Self.code()
        #expect(code.anonymousKB > 0)
        _ = Self.touch(code)
        let residentKB = try Self.code().residentKB
        _ = agent_release_file_pages(&problem)
        #expect(problem == 0)
        let after = try Self.code()
        #expect(after.anonymousKB == code.anonymousKB, "the copied page is kept")
        #expect(after.residentKB == residentKB, "and its whole segment with it")
    }
}
