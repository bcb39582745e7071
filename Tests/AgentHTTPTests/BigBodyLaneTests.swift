import AgentTestSupport
import Foundation
import Testing

/// A request with a big body is parsed and checked on a thread of its own (`agent-http-body`),
/// not on the HTTP front's event loop, which every other request and the health listener
/// share: a client sending bodies of many small elements no longer holds them all.
@Suite(.ownThreads) struct BigBodyLaneTests {
    /// CPU clock ticks (user and system) of `pid`'s threads whose name starts with `prefix`.
    static func ticks(_ pid: Int32, named prefix: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, tid in
            let folder = "/proc/\(pid)/task/\(tid)"
            guard let name = try? String(contentsOfFile: folder + "/comm", encoding: .utf8), name.hasPrefix(prefix),
                  let stat = try? String(contentsOfFile: folder + "/stat", encoding: .utf8),
                  let after = stat.split(separator: ")").last else { return sum }
            // After the name: state (field 3) … utime (14) and stime (15).
            let fields = after.split(separator: " ")
            return sum + (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        }
    }

    @Test func bigBodiesAreParsedAndCheckedOnTheirOwnThreadNotOnTheEventLoop() throws {
        let agent = try HTTPAgent()
        let pid = agent.run.process.processIdentifier
        let loopBefore = Self.ticks(pid, named: "agent-http-loop")
        // 80,000 small keys (870 kB): refused at the first unknown member, after a parse of all.
        let keys = (0..<80_000).map { "\"\($0)\":0" }.joined(separator: ",")
        let body = #"{"outputx":{"# + keys + "}}"
        for _ in 0..<8 {
            let reply = try agent.request("POST", "/api/runs/nope-1/complete", body: body)
            #expect(reply.status == 400, "\(reply.status)")
            #expect(reply.json?["pointer"] as? String == "/outputx")
        }
        let lane = Self.ticks(pid, named: "agent-http-body")
        let loop = Self.ticks(pid, named: "agent-http-loop") - loopBefore
        #expect(lane > 2 * loop, "the body thread used \(lane) ticks, the event loop \(loop)")
        // A small body stays on the event loop, answered as before.
        let small = try agent.request("POST", "/api/runs/nope-1/complete", body: #"{"outputx": 1}"#)
        #expect(small.status == 400)
        #expect(small.json?["pointer"] as? String == "/outputx")
        #expect(agent.run.stop() == 0)
    }
}
