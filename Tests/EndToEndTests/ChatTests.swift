import AgentTestSupport
import Foundation
import Testing

/// The chatbot through the real agent: `agent-control chat` → control socket → supervisor →
/// chatbot worker → adapters (built-in, from a module, over HTTP) → reply.
@Suite(.ownThreads, .serialized) struct ChatTests {
    final class Agent {
        let directory = TestPaths.temporaryDirectory("chat")
        var settings: String { directory + "/settings.json" }

        init(_ settings: String) throws {
            try settings.write(toFile: self.settings, atomically: true, encoding: .utf8)
            let started = try runProgram("agent-control", ["start", "--no-build", "--settings", self.settings])
            guard started.status == 0 else { throw ChatError(started.stderr) }
        }

        deinit { _ = try? runProgram("agent-control", ["stop", "--settings", settings]) }

        func chat(_ text: String) throws -> ProgramResult {
            try runProgram("agent-control", ["chat", text, "--settings", settings])
        }

        func waitForReady(_ count: Int) throws {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let status = try runProgram("agent-control", ["status", "--json", "--settings", settings])
                let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
                let processes = object?["processes"] as? [[String: Any]] ?? []
                if processes.count == count, processes.allSatisfy({ $0["state"] as? String == "running" }) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    struct ChatError: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }

    static let agent = """
    {"enabled_modules": ["sample"], "processes": {
      "trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.01},
      "busy": {"type": "trade_frequency", "window": 30, "threshold": 5},
      "chat": {"type": "chatbot", "logic_adapters": ["features", "status", "process_control", "latest_value", "sample.trades_counter"]}}}
    """

    @Test func chatbotAnswersFromItsAdaptersAndKeepsTheConversation() throws {
        let agent = try Agent(Self.agent)
        try agent.waitForReady(3)
        // Asked until the feed's first trades are in the store (a loaded machine is slow to it).
        var count = try agent.chat("how many trades in the last 5 minutes?")
        let deadline = Date().addingTimeInterval(30)
        while !count.stdout.contains("(X/Y "), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            count = try agent.chat("how many trades in the last 5 minutes?")
        }
        #expect(count.status == 0, "\(count.stderr)")
        #expect(count.stdout.hasPrefix("bot> There were "), "\(count.stdout)")
        #expect(count.stdout.contains("trades in the last 5 minutes (X/Y "))

        let features = try agent.chat("what can you do?")
        #expect(features.stdout.contains("Counts the trades of the sample feed"))
        #expect(features.stdout.contains("(e.g. \"how many trades in the last 5 minutes?\")"))

        let status = try agent.chat("what is the status of the processes?")
        #expect(status.stdout.contains("trades: running (pid "))
        #expect(status.stdout.contains("busy: running"))

        let latest = try agent.chat("what is the cpu usage?")
        #expect(latest.stdout.contains("I have no host_stats event yet"), "\(latest.stdout)")

        let nonsense = try agent.chat("banana smoothie recipe")
        #expect(nonsense.stdout == "bot> I am sorry, but I do not understand.\n")

        // Process control is off unless the chatbot's settings allow it.
        let refused = try agent.chat("restart trades")
        #expect(refused.stdout.contains("set \"allow_process_control\": true"))

        let history = try runProgram("agent-control", ["chat", "--history", "--settings", agent.settings])
        #expect(history.stdout.contains("you> how many trades in the last 5 minutes?"))
        #expect(history.stdout.contains("bot> There were "))
        // An answer is given once its reply is in the history: the last one is there at once.
        #expect(history.stdout.contains("allow_process_control"), "the last answer is not in the history read right after it:\n\(history.stdout)")
        // The monitor's alert joined the conversation.
        #expect(history.stdout.contains("alert from busy> X/Y: 6 trade events"), "\(history.stdout)")
        #expect(try runProgram("agent-control", ["chat", "--clear-history", "--settings", agent.settings]).status == 0)
        // The clear is committed by the store's writer after the answer.
        var cleared = try runProgram("agent-control", ["chat", "--history", "--settings", agent.settings])
        let clearDeadline = Date().addingTimeInterval(10)
        while cleared.stdout.contains("you> how many trades"), Date() < clearDeadline {
            Thread.sleep(forTimeInterval: 0.1)
            cleared = try runProgram("agent-control", ["chat", "--history", "--settings", agent.settings])
        }
        #expect(!cleared.stdout.contains("you> how many trades"))
    }

    @Test func chatReadsAConversationFromStandardInput() throws {
        let agent = try Agent(Self.agent)
        try agent.waitForReady(3)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.products + "/agent-control")
        process.arguments = ["chat", "--settings", agent.settings]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // A chat that never ends would hold the read below: killed after 2 minutes, saying so.
        let deadline = ProcessDeadline.kill(process, after: 120, "agent-control chat")
        defer { deadline.cancel() }
        input.fileHandleForWriting.write(Data("what can you do?\nhow many trades?\n".utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(ProcessDeadline.waitForExit(process, within: 60, "agent-control chat") == 0, "\(text)")
        let answers = text.split(separator: "\n").filter { $0.hasPrefix("bot> ") }
        #expect(answers.count == 2, "\(text)")
        #expect(answers.last?.hasPrefix("bot> There were ") == true)
    }

    @Test func allowedProcessControlRestartsTheNamedProcess() throws {
        let agent = try Agent("""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.5},
          "chat": {"type": "chatbot", "logic_adapters": ["status", "process_control"], "allow_process_control": true}}}
        """)
        try agent.waitForReady(2)
        let before = try runProgram("agent-control", ["status", "--json", "--settings", agent.settings]).stdout
        let answer = try agent.chat("please restart the trades process")
        #expect(answer.stdout == "bot> Restart of trades requested.\n", "\(answer.stdout)\(answer.stderr)")
        let first = try #require(pid(of: "trades", in: before))
        let deadline = Date().addingTimeInterval(30)
        var after = before
        while pid(of: "trades", in: after) == first || pid(of: "trades", in: after) == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            after = try runProgram("agent-control", ["status", "--json", "--settings", agent.settings]).stdout
        }
        #expect(pid(of: "trades", in: after) != nil && pid(of: "trades", in: after) != first)
    }

    /// A chatbot with a `watchdog` sent no heartbeat while it waited for messages, and was
    /// killed every few seconds for it: it beats while idle now (three times a watchdog).
    @Test func anIdleChatbotWithAWatchdogIsNotKilled() throws {
        let agent = try Agent("""
        {"enabled_modules": [], "processes": {
          "chat": {"type": "chatbot", "logic_adapters": ["features"], "watchdog": 2}}}
        """)
        try agent.waitForReady(1)
        // Running for five watchdog periods, without a restart.
        let deadline = Date().addingTimeInterval(120)
        var chat: [String: Any]?
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            let status = try runProgram("agent-control", ["status", "--json", "--settings", agent.settings]).stdout
            let object = try? JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
            chat = (object?["processes"] as? [[String: Any]])?.first { $0["name"] as? String == "chat" }
        } while (chat?["state_seconds"] as? Double ?? 0) < 10 && (chat?["restarts"] as? Int ?? 0) == 0 && Date() < deadline
        #expect(chat?["restarts"] as? Int == 0, "\(String(describing: chat))")
        #expect((chat?["state_seconds"] as? Double ?? 0) >= 10, "\(String(describing: chat))")
        let answer = try agent.chat("what can you do?")
        #expect(answer.status == 0 && answer.stdout.hasPrefix("bot> "), "\(answer.stdout)\(answer.stderr)")
    }

    private func pid(of name: String, in status: String) -> Int? {
        let object = try? JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
        let process = (object?["processes"] as? [[String: Any]])?.first { $0["name"] as? String == name }
        return process?["pid"] as? Int
    }

    @Test func restAdapterAsksAServiceAndSaysWhenItIsDown() throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        server.answer(with: #"{"confidence": 0.8, "response": "42, from the service"}"#)
        let agent = try Agent("""
        {"enabled_modules": [], "processes": {
          "chat": {"type": "chatbot", "logic_adapters": ["features", {"type": "rest", "url": "\(server.url)", "timeout": 20, "retries": 0}]}}}
        """)
        try agent.waitForReady(1)
        let answer = try agent.chat("what is the answer to everything?")
        #expect(answer.stdout == "bot> 42, from the service\n", "\(answer.stdout)\(answer.stderr)")
        let request = try #require(server.requests.first)
        let body = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
        #expect(body?["message"] as? String == "what is the answer to everything?")
        #expect(body?["conversation"] as? String == "default")
        // The agent adds the sender and their preferences to every message's context.
        #expect((body?["context"] as? [String: Any])?["preferences"] != nil && (body?["context"] as? [String: Any])?["user"] != nil, "\(String(describing: body))")
        // A context given with the message reaches the service with it.
        let withContext = try runProgram("agent-control", ["chat", "hello", "--context", #"{"user": "alice", "channel": 7}"#, "--settings", agent.settings])
        #expect(withContext.status == 0, "\(withContext.stderr)")
        let second = try JSONSerialization.jsonObject(with: Data(try #require(server.requests.dropFirst().first).body)) as? [String: Any]
        #expect((second?["context"] as? [String: Any])?["user"] as? String == "alice", "\(String(describing: second))")
        let notAnObject = try runProgram("agent-control", ["chat", "hello", "--context", "[1]", "--settings", agent.settings])
        #expect(notAnObject.status == 64 && notAnObject.stderr.contains("--context must be a JSON object"), "\(notAnObject.stderr)")

        server.stop()
        let down = try agent.chat("what is the answer to everything?")
        #expect(down.stdout.hasPrefix("bot> I am sorry, but I do not understand. (the service at \(server.url) did not answer"), "\(down.stdout)")
    }

    @Test func chatWithoutAChatbotAndUnknownAdaptersAreClearErrors() throws {
        let agent = try Agent(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed"}}}"#)
        try agent.waitForReady(1)
        let answer = try agent.chat("hello")
        #expect(answer.status == 1)
        #expect(answer.stderr.contains("no chatbot process is configured"))

        let file = TestPaths.temporaryDirectory("chat-settings") + "/settings.json"
        try #"{"enabled_modules": ["sample"], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["featurs", "sample.trade_counter", {"type": "rest"}]}}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let report = try runProgram("validate-settings", ["--settings", file])
        #expect(report.status == 2)
        #expect(report.stdout.contains(#"/processes/chat/logic_adapters/0: unknown logic adapter "featurs"; did you mean "features"?"#), "\(report.stdout)")
        #expect(report.stdout.contains(#"/processes/chat/logic_adapters/1: unknown logic adapter "sample.trade_counter"; did you mean "sample.trades_counter"?"#))
        #expect(report.stdout.contains(#"/processes/chat/logic_adapters/2: a rest adapter needs "url""#))
    }
}
