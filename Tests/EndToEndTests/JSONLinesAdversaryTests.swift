import AgentTestSupport
import Foundation
import Testing

/// `jsonl/1` programs that break the protocol's rules under the real agent-control: what they
/// write must not be taken for what it is not.
@Suite(.ownThreads) struct JSONLinesAdversaryTests {
    private typealias Fixture = ProgramModuleFixture

    /// A logic adapter that answers each message, except that it holds the answer to "q1"
    /// until the next message comes (after the chatbot gave up on it).
    private static let lateOracle = Fixture.prelude + """
        send({"ready": True})
        held = None
        for frame in frames():
            if frame.get("stop"):
                break
            message = frame["chat"]["message"]
            if message.startswith("q1"):
                held = message
                continue
            if held:
                send({"answer": {"confidence": 1, "text": "answer to " + held.split()[0]}})
                held = None
            send({"answer": {"confidence": 1, "text": "answer to " + message.split()[0]}})

        """

    /// Asks a chatbot whose one adapter is `program` "q1", "q2" and "q3": q1's answer does not
    /// come within the answer timeout (the default response), the others must be their own.
    private func askThreeTimes(module: String, program: String) throws {
        let manifest = Fixture.manifest(name: module, types: [("oracle", "logic_adapter", "oracle.py", #""examples": ["what is the answer"]"#)])
        let directory = try Fixture.write(name: module, manifest: manifest, files: ["oracle.py": program])
        let run = try AgentRun(settings: #"{"enabled_modules": ["\#(module)"], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["\#(module).oracle"], "confidence_threshold": 0.1, "default_response": "no idea"}}}"#,
                               directory: directory)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[chat] ready") } != nil, "\(run.transcript)")
        func chat(_ text: String) throws -> String {
            try runProgram("agent-control", ["chat", text, "--settings", run.settingsFile]).stdout
        }
        let first = try chat("q1 what is the answer")
        #expect(first.contains("no idea"), "\(first)")
        for question in ["q2", "q3"] {
            let answer = try chat(question + " what is the answer")
            #expect(answer.contains("answer to " + question), "\(answer)")
        }
        #expect(run.stop() == 0)
    }

    @Test func aLateAnswerIsNotTakenForTheNextMessagesAnswer() throws {
        try askThreeTimes(module: "talk", program: Self.lateOracle)
    }

    /// The same, echoing ids, and worse: the held answer to "q1" comes after the answer to
    /// the next message, where counting the answers owed would take it for that one's.
    private static let lateOracleWithIDs = Fixture.prelude + """
        send({"ready": True})
        held = None
        for frame in frames():
            if frame.get("stop"):
                break
            chat = frame["chat"]
            message = chat["message"]
            if message.startswith("q1"):
                held = chat
                continue
            send({"answer": {"confidence": 1, "text": "answer to " + message.split()[0], "id": chat["id"]}})
            if held:
                send({"answer": {"confidence": 1, "text": "answer to " + held["message"].split()[0], "id": held["id"]}})
                held = None

        """

    @Test func aLateAnswerThatComesAfterTheNextOneIsKnownByItsID() throws {
        try askThreeTimes(module: "talkid", program: Self.lateOracleWithIDs)
    }

    @Test func aCommandThatCannotRunIsRefusedBeforeAnythingStarts() throws {
        let manifest = #"{"name": "norun", "version": "1", "protocol": "jsonl/1", "process_types": {"a": {"kind": "datasource", "command": ["./missing.sh"]}, "b": {"kind": "datasource", "command": ["./plain.txt"]}, "c": {"kind": "monitor", "command": ["no-such-program-anywhere"]}}}"#
        let directory = try Fixture.write(name: "norun", manifest: manifest, files: ["plain.txt": "not a program"])
        try #"{"enabled_modules": ["norun"], "processes": {"a": {"type": "a"}}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        let output = result.stdout + result.stderr
        #expect(result.status == 2, "\(output)")
        #expect(output.contains("modules/norun/module.json"), "\(output)")
        #expect(output.contains(#"/process_types/a/command/0: expected a program that can run, found "./missing.sh": the command's program"#), "\(output)")
        #expect(output.contains(#"/process_types/b/command/0: expected a program that can run, found "./plain.txt""#) && output.contains("`chmod +x` it"), "\(output)")
        #expect(output.contains(#"/process_types/c/command/0: expected a program that can run, found "no-such-program-anywhere": the command's program "no-such-program-anywhere" is not in PATH"#), "\(output)")
    }

    /// A datasource that leaves a child holding its stdout, then crashes.
    private static let crashingParent = Fixture.prelude + """
        import os
        send({"ready": True})
        if os.fork() == 0:
            os.setsid()
            time.sleep(1000)
            os._exit(0)
        os._exit(3)

        """

    @Test func aProgramThatCrashesIsSeenAtOnceThoughItsChildHoldsItsStdout() throws {
        let manifest = Fixture.manifest(name: "orphan", types: [("src", "datasource", "src.py", "")])
        let directory = try Fixture.write(name: "orphan", manifest: manifest, files: ["src.py": Self.crashingParent])
        let run = try AgentRun(settings: #"{"enabled_modules": ["orphan"], "processes": {"a": {"type": "src", "restart": "never"}}}"#, directory: directory)
        let failed = run.waitForLine(onStderr: true) { $0.contains("[a]") && $0.contains("the program exited with status 3") }
        #expect(failed != nil, "\(run.transcript)")
        #expect(run.stop() == 0)
    }

    @Test func aSettingTheRuntimeTakesForItselfIsRefusedInTheManifest() throws {
        let manifest = #"{"name": "keys", "version": "1", "protocol": "jsonl/1", "process_types": {"src": {"kind": "datasource", "command": ["python3", "src.py"], "settings": {"required": ["restart"], "properties": {"restart": {"type": "integer"}, "subscribe": {"type": "array"}, "every": {"type": "number"}}}}}}"#
        let directory = try Fixture.write(name: "keys", manifest: manifest, files: ["src.py": ""])
        try #"{"enabled_modules": ["keys"], "processes": {"a": {"type": "src", "restart": "always"}}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        let output = result.stdout + result.stderr
        #expect(result.status == 2, "\(output)")
        #expect(output.contains("modules/keys/module.json"), "\(output)")
        #expect(output.contains(#"/process_types/src/settings/properties/restart: expected a setting the runtime does not take for itself ("#) && output.contains(#"found "restart""#), "\(output)")
        #expect(!output.contains("properties/subscribe") && !output.contains("properties/every"), "\(output)")
    }
}
