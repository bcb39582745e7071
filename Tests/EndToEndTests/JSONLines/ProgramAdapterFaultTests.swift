import AgentTestSupport
import Foundation
import Testing

/// Logic adapters whose programs misbehave (Tests/Fixtures/pyfix/moody.py): the chatbot goes on
/// answering with its other adapters, and a program that ends or stops answering is started
/// again, through the real agent-control and agent-worker.
@Suite(.ownThreads) struct ProgramAdapterFaultTests {
    static func chat(_ agent: AgentRun, _ text: String) throws -> ProgramResult {
        try runProgram("agent-control", ["chat", text, "--settings", agent.settingsFile], timeout: 120)
    }

    /// Waits until the chatbot runs (its adapters' programs all said ready).
    static func waitForTheChatbot(_ agent: AgentRun) -> Bool {
        JSONLinesFixture.wait(timeout: 120) { () -> Bool? in
            guard let status = try? runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]),
                  let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any],
                  let processes = object["processes"] as? [[String: Any]] else { return nil }
            return processes.contains { $0["name"] as? String == "chat" && $0["state"] as? String == "running" } ? true : nil
        } ?? false
    }

    @Test func silentAdaptersAreAskedSideBySideAndStartedAgainAfterTwoMissedMessages() throws {
        let never = #"{"type": "pyfix.py_moody", "mode": "never"}"#
        let agent = try JSONLinesFixture.start("""
            "chat": {"type": "chatbot", "logic_adapters": ["status", \(never), \(never), \(never)]}
            """, label: "py-adapter-never")
        defer { _ = agent.stop() }
        #expect(Self.waitForTheChatbot(agent), "\(agent.transcript)")
        // Three silent programs asked one after another took 30 s: the relay gave up. Side by
        // side they cost one wait of 10 s, and status answers.
        for round in 1...2 {
            let answer = try Self.chat(agent, "what is the status of the processes?")
            #expect(answer.status == 0 && answer.stdout.contains("chat"), "round \(round): \(answer.stdout)\(answer.stderr)\n\(agent.transcript)")
        }
        let restarted = agent.waitForLines(onStderr: true, count: 3) {
            $0.contains("answered none of the last 2 messages") && $0.contains("starting it again in 1 s")
        }
        #expect(restarted.count == 3, "\(agent.transcript)")
        #expect(agent.waitForLines(onStderr: true, count: 3) { $0.contains("its program is ready again") }.count == 3, "\(agent.transcript)")
    }

    @Test func anAdapterWhoseProgramExitsIsStartedAgainAndAnswers() throws {
        let directory = try JSONLinesFixture.directory("py-adapter-exit")
        let marker = directory + "/exited-once"
        // A helper each start of the program leaves running, under a name of its own.
        let helperName = "adhelper\(getpid() % 100_000)"
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: directory + "/" + helperName)
        let agent = try JSONLinesFixture.start("""
            "chat": {"type": "chatbot", "logic_adapters": ["status", {"type": "pyfix.py_moody", "mode": "exit_once", "marker": "\(marker)", "helper": "\(directory)/\(helperName)"}]}
            """, directory: directory)
        defer { _ = agent.stop() }
        #expect(Self.waitForTheChatbot(agent), "\(agent.transcript)")
        let first = try Self.chat(agent, "moody, are you there?")
        #expect(first.status == 0 && !first.stdout.contains("back again"), "\(first.stdout)\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: marker), "the program saw the message and exited")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("(exit status 3); starting it again in 1 s") } != nil, "\(agent.transcript)")
        let back = JSONLinesFixture.wait { () -> String? in
            let answer = try? Self.chat(agent, "moody, are you there?")
            return answer.flatMap { $0.stdout.contains("back again") ? $0.stdout : nil }
        }
        #expect(back != nil, "the program started again answers\n\(agent.transcript)")
        // The first start's helper died with its program's group: one is left, the second's.
        #expect(ProcFacts.living(named: helperName).count == 1, "\(ProcFacts.living(named: helperName))")
    }

    @Test func anAdapterWhoseProgramEndsBeforeItsFirstReadyLeavesTheChatbotUpAndIsStartedAgain() throws {
        let directory = try JSONLinesFixture.directory("py-adapter-early-exit")
        let marker = directory + "/exited-once"
        let agent = try JSONLinesFixture.start("""
            "chat": {"type": "chatbot", "logic_adapters": ["status", {"type": "pyfix.py_moody", "mode": "exit_before_ready_once", "marker": "\(marker)"}]}
            """, directory: directory)
        defer { _ = agent.stop() }
        // The chatbot runs with its other adapters (it used to fail, its settings blamed).
        #expect(Self.waitForTheChatbot(agent), "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("(exit status 4); starting it again in 1 s") } != nil, "\(agent.transcript)")
        let back = JSONLinesFixture.wait { () -> String? in
            let answer = try? Self.chat(agent, "moody, are you there?")
            return answer.flatMap { $0.stdout.contains("back again") ? $0.stdout : nil }
        }
        #expect(back != nil, "the program started again answers\n\(agent.transcript)")
    }

    @Test func anAdapterThatReadsItsEventsSlowlyHoldsNeitherTheChatbotNorItsOwnAnswers() throws {
        // 20 MB of events for a program that takes 20 ms a line: its chatbot's worker waited in a
        // write to it, and every chat timed out for minutes.
        let agent = try JSONLinesFixture.start("""
            "flood": {"type": "py_fault", "mode": "flood", "count": 20000, "payload_bytes": 1000, "after": 0.5},
            "chat": {"type": "chatbot", "logic_adapters": ["status", {"type": "pyfix.py_slow_reader", "mode": "slow_reader", "delay": 0.02}]}
            """, label: "py-adapter-slow")
        defer { _ = agent.stop() }
        // From the store: the console drops stdout lines a loaded test process reads too slowly
        // (20 MB of them here), py_end among them.
        #expect(JSONLinesFixture.wait(timeout: 120) { ((try? JSONLinesFixture.storedEvents(agent.directory, type: "py_end")) ?? []).isEmpty ? nil : true } != nil,
                "\(agent.transcript)")
        let status = try Self.chat(agent, "what is the status of the processes?")
        #expect(status.status == 0 && status.stdout.contains("flood"), "\(status.stdout)\(status.stderr)\n\(agent.transcript)")
        // Its messages go ahead of the events waiting for it.
        let own = try Self.chat(agent, "slow reader, are you there?")
        #expect(own.status == 0 && own.stdout.contains("slow but here"), "\(own.stdout)\(own.stderr)\n\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("reads its events too slowly: dropped the") } != nil, "\(agent.transcript)")
    }

    @Test func strayAndRepeatedAnswersTakeNoMessagesPlace() throws {
        let agent = try JSONLinesFixture.start("""
            "chat": {"type": "chatbot", "logic_adapters": ["status", {"type": "pyfix.py_moody", "mode": "stray"}]}
            """, label: "py-adapter-stray")
        defer { _ = agent.stop() }
        #expect(Self.waitForTheChatbot(agent), "\(agent.transcript)")
        for round in 1...3 {
            let answer = try Self.chat(agent, "moody, round \(round)")
            #expect(answer.status == 0 && answer.stdout.contains("right one"), "round \(round): \(answer.stdout)\(answer.stderr)\n\(agent.transcript)")
        }
        #expect(!agent.stderrLines.contains { $0.contains("did not answer in time") }, "\(agent.transcript)")
    }

    @Test func anAnswerWaitingWhileASlowRestServiceTookTheTimeIsTaken() throws {
        // A service that takes the connection and never answers: the rest adapter waits 2 × 6 s.
        let listener = try LoopbackListener()
        defer { listener.close() }
        let port = listener.port
        let agent = try JSONLinesFixture.start("""
            "chat": {"type": "chatbot", "logic_adapters": [{"type": "pyfix.py_moody", "mode": "stray"},
                     {"type": "rest", "url": "http://127.0.0.1:\(port)/answer", "timeout": 6, "retries": 1}]}
            """, label: "py-adapter-rest")
        defer { _ = agent.stop() }
        #expect(Self.waitForTheChatbot(agent), "\(agent.transcript)")
        let answer = try Self.chat(agent, "moody, are you there?")
        #expect(answer.status == 0 && answer.stdout.contains("right one"), "\(answer.stdout)\(answer.stderr)\n\(agent.transcript)")
        #expect(!agent.stderrLines.contains { $0.contains("did not answer in time") }, "\(agent.transcript)")
    }
}
