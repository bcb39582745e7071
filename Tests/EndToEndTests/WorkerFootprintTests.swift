import AgentTestSupport
import Foundation
import Testing

/// Workers stay small: the server-side libraries (Hummingbird, NIO, metrics, PostgresNIO) are linked by
/// agent-control only.
@Suite(.ownThreads) struct WorkerFootprintTests {
    @Test func workerLinksNoServerSideLibrary() throws {
        let worker = try Data(contentsOf: URL(fileURLWithPath: TestPaths.products + "/agent-worker"))
        let control = try Data(contentsOf: URL(fileURLWithPath: TestPaths.products + "/agent-control"))
        for library in ["Hummingbird", "NIOPosix", "Prometheus", "PostgresNIO"] {
            // Swift symbols carry their module's name; agent-control has them, so the search works.
            #expect(control.range(of: Data(library.utf8)) != nil, "agent-control should contain \(library)")
            #expect(worker.range(of: Data(library.utf8)) == nil, "agent-worker contains \(library)")
        }
    }
}
