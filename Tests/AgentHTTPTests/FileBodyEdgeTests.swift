import AgentTestSupport
import Foundation
import Testing

/// A file body's route (`POST /api/chat/voice`) with what a hostile client sends: an empty
/// Content-Type or one of parameters only is refused like any other type no route takes (it
/// trapped the agent, HTTP front and supervisor together), and a query member given twice is
/// refused as a GET's is (the last one won, unseen).
@Suite(.ownThreads, .serialized) struct FileBodyEdgeTests {
    @Test func anEmptyOrParameterOnlyContentTypeIsRefusedAndTheAgentStaysUp() throws {
        let agent = try HTTPAgent()
        for type in ["", ";", " ; charset=utf-8"] {
            let answer = try agent.request("POST", "/api/chat/voice", body: "RIFF", headers: ["Content-Type": type])
            #expect(answer.status == 415, "Content-Type \"\(type)\": \(answer)")
        }
        #expect(try agent.request("GET", "/livez").status == 200)
        #expect(agent.run.process.isRunning)
    }

    @Test func aFileBodysQueryMemberGivenTwiceIsRefused() throws {
        let agent = try HTTPAgent()
        let answer = try agent.request("POST", "/api/chat/voice?conversation=a&conversation=b", body: "RIFF", headers: ["Content-Type": "audio/wav"])
        #expect(answer.status == 400 && answer.json?["pointer"] as? String == "/conversation", "\(answer)")
    }
}
