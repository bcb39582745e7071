import AgentWork
import Foundation
import Testing

/// The assignment choices (strategies, drained executors) on the stores that keep them.
extension StoreContract {
    /// Keys set, replaced and removed.
    package static let assignments: [StoreCheck] = [
        StoreCheck("assignmentChoicesAreKeptReplacedAndRemovedByKey", assignmentChoicesAreKeptReplacedAndRemovedByKey),
    ]

    static func assignmentChoicesAreKeptReplacedAndRemovedByKey(_ stores: StoresUnderTest) async throws {
        let store = try #require(stores.assignments, "this implementation keeps no assignment choices")
        #expect(try store.load().isEmpty)
        store.save(key: "strategy", value: "least-loaded")
        store.save(key: "strategy:t", value: "round-robin")
        store.save(key: "drain:gpu-1", value: "1")
        store.save(key: "strategy", value: "random")
        store.save(key: "drain:gpu-1", value: nil)
        store.save(key: "drain:never", value: nil)
        try await waitFor { try store.load() == ["strategy": "random", "strategy:t": "round-robin"] }
    }

    /// Waits (at most 60 s) until `condition` holds: for writes handed over without a way to await them.
    package static func waitFor(_ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        while try !condition() {
            guard Date() < deadline else {
                Issue.record("the condition did not hold within 60 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
