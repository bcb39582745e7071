import Testing
@testable import AgentRuntime

/// Which of the executable's mappings the start's page release may give back: only those whose
/// every page is still the file's.
@Suite struct StartPagesMappingTests {
    static let executable = "/opt/agent/bin/agent-control"

    static func smaps(_ permissions: String, anonymous: Int, swap: Int, path: String = executable) -> String {
        """
        55d0c0000000-55d0c0004000 \(permissions) 00000000 fd:01 1234 \(path)
        Size:                 16 kB
        Rss:                  16 kB
        Anonymous:            \(anonymous) kB
        Swap:                 \(swap) kB
        SwapPss:              \(swap) kB
        """
    }

    @Test func aSwappedOutCopyCountsAsWrittenLikeAResidentOne() {
        let swapped = StartPages.mappings(in: Self.smaps("r--p", anonymous: 0, swap: 8), of: Self.executable)
        #expect(swapped.count == 1 && swapped[0].copiedKB == 8, "a relocated page swapped out shows under Swap:, and must keep the mapping")
        let resident = StartPages.mappings(in: Self.smaps("r--p", anonymous: 4, swap: 0), of: Self.executable)
        #expect(resident.count == 1 && resident[0].copiedKB == 4)
        let clean = StartPages.mappings(in: Self.smaps("r-xp", anonymous: 0, swap: 0), of: Self.executable)
        #expect(clean.count == 1 && clean[0].copiedKB == 0 && !clean[0].writable)
    }

    @Test func otherFilesAndWritableMappingsAreToldApart() {
        #expect(StartPages.mappings(in: Self.smaps("r-xp", anonymous: 0, swap: 0, path: "/usr/lib/libc.so.6"), of: Self.executable).isEmpty)
        let data = StartPages.mappings(in: Self.smaps("rw-p", anonymous: 0, swap: 0), of: Self.executable)
        #expect(data.count == 1 && data[0].writable)
    }
}
