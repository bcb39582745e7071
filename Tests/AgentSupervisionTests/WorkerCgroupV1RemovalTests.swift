import AgentCore
import AgentTestSupport
@testable import AgentSupervision
import Foundation
import Testing

/// `WorkerCgroup.removeV1Folders` (a killed agent's fork server, for its v1 folders) removes only
/// `agent-…` folders of a cgroup v1 file system, never what a link or a `..` leads to.
@Suite(.ownThreads) struct WorkerCgroupV1RemovalTests {
    static var v1Writable: Bool { CgroupV1Limits.ownFolder("cpu").map { access($0, W_OK) == 0 } == true }

    /// Makes `path` and `path/child` (they may be there already); returns what removes both.
    static func folder(_ path: String, holding child: String) throws -> () -> Void {
        try #require(mkdir(path, 0o755) == 0 || errno == EEXIST)
        try #require(mkdir(path + "/" + child, 0o755) == 0 || errno == EEXIST)
        return {
            rmdir(path + "/" + child)
            rmdir(path)
        }
    }

    @Test(.enabled(if: v1Writable)) func anAgentsFolderGoesAndALinkOrAPlainFolderDoesNot() throws {
        let own = try #require(CgroupV1Limits.ownFolder("cpu"))
        let target = own + "/v1-removal-\(getpid())"
        let removeTarget = try Self.folder(target, holding: "group")
        defer { removeTarget() }
        let agent = own + "/agent-v1-removal-\(getpid())"
        let removeAgent = try Self.folder(agent, holding: "run-1")
        defer { removeAgent() }
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
