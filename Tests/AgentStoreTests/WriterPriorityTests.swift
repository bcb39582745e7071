@testable import AgentStore
import AgentTestSupport
import Foundation
import Glibc
import Logging
import Testing

/// The writer yields the CPU to routing: it runs below the thread that opened the store.
@Suite(.ownThreads) struct WriterPriorityTests {
    /// The nice value of each of this process's threads named `name` (field 19 of its stat).
    static func niceValues(ofThreadsNamed name: String) -> [Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> Int? in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After the name: state is field 3, nice field 19.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int(fields[16]) : nil
        }
    }

    @Test func theWriterAndCheckpointThreadsRunFiveNiceStepsBelowTheThreadThatOpenedTheStore() throws {
        #expect(AgentStore.writerNiceSteps == 5, "AGENT_STORE_WRITER_NICE is set in the test's environment")
        errno = 0
        let own = Int(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        try #require(errno == 0)
        let folder = TestPaths.temporaryDirectory("writer-priority")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        // More than 4 MiB of WAL, in commits of about 0.5 MiB (each waited for): the commit
        // that crosses 4 MiB asks the checkpoint thread (one that crossed 8 MiB would have the
        // writer copy the WAL back itself).
        let payload = String(repeating: "x", count: 400)
        var handedOver = 0
        let deadline = Date().addingTimeInterval(120)
        while store.checkpoints.byThread == 0, handedOver < 40_000, Date() < deadline {
            for index in handedOver..<(handedOver + 1_000) {
                store.append(type: "tick", source: "clock", time: Date().timeIntervalSince1970, payload: #"{"n":\#(index),"pad":"\#(payload)"}"#)
            }
            handedOver += 1_000
            while store.statistics.committed < handedOver, Date() < deadline { usleep(2_000) }
        }
        while store.checkpoints.byThread == 0, Date() < deadline { usleep(5_000) }
        try #require(store.checkpoints.byThread > 0, "no checkpoint by the thread: \(store.checkpoints), \(store.statistics)")
        // Every store in this process was opened from a test's thread like this one, and each
        // thread lowers its priority before it names itself.
        let expected = min(19, own + Int(AgentStore.writerNiceSteps))
        for name in [AgentStore.writerThreadName, AgentStore.checkpointThreadName] {
            let seen = Self.niceValues(ofThreadsNamed: name)
            #expect(!seen.isEmpty && seen.allSatisfy { $0 == expected }, "\(name) threads' nice values \(seen), expected \(expected)")
        }
    }
}
