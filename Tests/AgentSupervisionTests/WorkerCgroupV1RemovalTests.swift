import AgentCore
import AgentTestSupport
@testable import AgentSupervision
import Foundation
import Testing

/// `WorkerCgroup.removeV1Folders` (a killed agent's fork server, for its v1 folders) removes only
/// `agent-…` folders of a cgroup v1 file system, never what a link or a `..` leads to.
@Suite struct WorkerCgroupV1RemovalTests {
    static var v1Writable: Bool { CgroupV1Limits.ownFolder("cpu").map { access($0, W_OK) == 0 } == true }

    @Test(.enabled(if: v1Writable)) func anAgentsFolderGoesAndALinkOrAPlainFolderDoesNot() throws {
        let own = try #require(CgroupV1Limits.ownFolder("cpu"))
        let target = own + "/v1-removal-\(getpid())"
        try #require(mkdir(target, 0o755) == 0 || errno == EEXIST)
        try #require(mkdir(target + "/group", 0o755) == 0 || errno == EEXIST)
        defer {
            rmdir(target + "/group")
            rmdir(target)
        }
        let agent = own + "/agent-v1-removal-\(getpid())"
        try #require(mkdir(agent, 0o755) == 0 || errno == EEXIST)
        try #require(mkdir(agent + "/run-1", 0o755) == 0 || errno == EEXIST)
        defer {
            rmdir(agent + "/run-1")
            rmdir(agent)
        }
        let directory = TestPaths.temporaryDirectory("v1-removal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A link named like an agent's folder, to a cgroup that is not one; a plain folder.
        try FileManager.default.createSymbolicLink(atPath: directory + "/agent-link", withDestinationPath: target)
        try FileManager.default.createDirectory(atPath: directory + "/agent-plain/sub", withIntermediateDirectories: true)
        WorkerCgroup.removeV1Folders([directory + "/agent-link", directory + "/agent-plain", target + "/../" + URL(fileURLWithPath: target).lastPathComponent].joined(separator: "\n"))
        #expect(FileManager.default.fileExists(atPath: target + "/group"), "removed a group through a link")
        #expect(FileManager.default.fileExists(atPath: directory + "/agent-plain/sub"))
        WorkerCgroup.removeV1Folders(agent)
        #expect(!FileManager.default.fileExists(atPath: agent), "the agent's folder is still there")
    }
}
