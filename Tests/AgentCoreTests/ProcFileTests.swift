@testable import AgentCore
import Foundation
import Testing

/// /proc files read with system calls: whole, however long, and without the leak of
/// Foundation's `String(contentsOfFile:)` on files whose size the kernel reports as 0.
@Suite(.ownThreads) struct ProcFileTests {
    private static func residentKilobytes() -> Int {
        let status = ProcFile.read("/proc/self/status") ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func readsAProcFileWholeEvenPastItsFirstPage() throws {
        let status = try #require(ProcFile.read("/proc/self/status"))
        #expect(status.hasPrefix("Name:"))
        #expect(status.contains("\nPid:\t\(getpid())\n"))
        // The maps of a test process are far longer than one read's 4 KB.
        let maps = try #require(ProcFile.bytes("/proc/self/maps"))
        #expect(maps.count > 8192)
        #expect(maps.last == UInt8(ascii: "\n"))
        #expect(ProcFile.bytes("/proc/self/maps", limit: 100)?.count == 100)
        #expect(ProcFile.read("/proc/no-such-file") == nil)
    }

    /// 20,000 reads leaked 81 MB through Foundation; through ProcFile they keep nothing (the
    /// bound is a tenth of that, far above the noise of a test process).
    @Test func repeatedReadsOfAProcFileKeepNoMemory() {
        let path = "/proc/self/task/\(getpid())/children"
        for _ in 0..<1000 { _ = ProcFile.read(path) }
        let before = Self.residentKilobytes()
        for _ in 0..<20_000 { _ = ProcFile.read(path) }
        let grown = Self.residentKilobytes() - before
        #expect(grown < 8192, "20,000 reads grew the process by \(grown) KB")
    }
}
