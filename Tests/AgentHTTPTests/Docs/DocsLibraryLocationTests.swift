import AgentTestSupport
import Foundation
import Testing
@testable import AgentHTTP

/// Where the dashboard's /docs reads its pages from.
@Suite(.ownThreads) struct DocsLibraryLocationTests {
    @Test func aFolderAboveTheBinaryWithSomeReadmeAndDocsIsNotServed() throws {
        let home = TestPaths.temporaryDirectory("docs-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        // A home folder with notes of its own, and the binary in its bin/.
        try FileManager.default.createDirectory(atPath: home + "/docs", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/bin", withIntermediateDirectories: true)
        try "private notes".write(toFile: home + "/README.md", atomically: true, encoding: .utf8)
        #expect(DocsLibrary.locate(environment: [:], executable: home + "/bin/agent-control").root == nil)
        // This runtime's documents (their API reference with them) are.
        try FileManager.default.createDirectory(atPath: home + "/docs/reference", withIntermediateDirectories: true)
        try "{}".write(toFile: home + "/docs/reference/openapi.json", atomically: true, encoding: .utf8)
        #expect(DocsLibrary.locate(environment: [:], executable: home + "/bin/agent-control").root == home)
    }
}
