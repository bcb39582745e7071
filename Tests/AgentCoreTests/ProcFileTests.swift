@testable import AgentCore
import Foundation
import Testing

/// /proc files read with system calls: whole, however long. (That they leak nothing, as
/// Foundation's `String(contentsOfFile:)` does on files whose size the kernel reports as 0, is
/// not checked here: the test process's memory moves with every suite running beside it.)
@Suite(.ownThreads) struct ProcFileTests {
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
}
