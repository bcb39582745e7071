import AgentCore
@testable import AgentSupervision
import AgentTestSupport
import Testing

/// The fork server's environment with and without `AGENT_FORK_SERVER_BIND_NOW`: `LD_BIND_NOW`
/// added only when the user has none, with the marker that has the server remove it again.
@Suite(.ownThreads) struct ForkServerEnvironmentTests {
    private static let marker = WorkerMain.bindNowAddedKey

    @Test(arguments: ["1", "yes", "TRUE", "on"])
    func theSwitchAddsLDBindNowAndTheMarker(value: String) {
        let server = ForkServer.serverEnvironment(["AGENT_FORK_SERVER_BIND_NOW": value, "HOME": "/root"])
        #expect(server["LD_BIND_NOW"] == "1")
        #expect(server[Self.marker] == "1")
        #expect(server["HOME"] == "/root")
    }

    @Test(arguments: [nil, "0", "off", "2", ""] as [String?])
    func withoutTheSwitchNothingIsAdded(value: String?) {
        var environment = ["HOME": "/root"]
        environment["AGENT_FORK_SERVER_BIND_NOW"] = value
        let server = ForkServer.serverEnvironment(environment)
        #expect(server["LD_BIND_NOW"] == nil)
        #expect(server[Self.marker] == nil)
    }

    /// A user's own value, even an empty one (which glibc takes as lazy), is theirs: kept, and
    /// no marker, so that the server leaves it to the workers.
    @Test(arguments: ["", "1"])
    func aUsersLDBindNowIsKeptAndNotMarked(value: String) {
        let server = ForkServer.serverEnvironment(["AGENT_FORK_SERVER_BIND_NOW": "1", "LD_BIND_NOW": value])
        #expect(server["LD_BIND_NOW"] == value)
        #expect(server[Self.marker] == nil)
    }

    @Test func aMarkerTheUserSetIsNotPassedOn() {
        let server = ForkServer.serverEnvironment(["LD_BIND_NOW": "1", Self.marker: "1"])
        #expect(server["LD_BIND_NOW"] == "1")
        #expect(server[Self.marker] == nil, "the server would have removed the user's LD_BIND_NOW from every worker")
    }
}
