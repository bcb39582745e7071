import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentScaffolding

/// `add-agent-module NAME --language python` as a user runs it: a module.json and Python
/// programs, their own tests passing, and the generated agent running them end to end.
@Suite(.ownThreads) struct PythonScaffoldingTests {
    @Test func aPythonModuleIsWrittenWithItsManifestProgramsTestsAndTheSDKAndPackageSwiftIsLeftAlone() throws {
        let directory = TestPaths.temporaryDirectory("python-add") + "/agent"
        #expect(try runProgram("create-agent", [directory]).status == 0)
        let package = try String(contentsOfFile: directory + "/Package.swift", encoding: .utf8)
        let added = try runProgram("add-agent-module", ["struct", "--language", "python"], in: directory)
        #expect(added.status == 0, "\(added.stderr)")
        for file in ["module.json", "source.py", "monitor.py", "adapter.py", "task.py", "test_struct.py", "agentruntime.py", "settings_template.json"] {
            #expect(added.stdout.contains("  modules/struct/\(file)\n"), "\(added.stdout)")
            #expect(FileManager.default.fileExists(atPath: directory + "/modules/struct/" + file), "\(file)")
        }
        #expect(added.stdout.contains("python3 -m unittest"), "\(added.stdout)")
        #expect(try String(contentsOfFile: directory + "/Package.swift", encoding: .utf8) == package)
        // The SDK is copied as it is in the runtime.
        #expect(FileManager.default.contents(atPath: directory + "/modules/struct/agentruntime.py")
                == FileManager.default.contents(atPath: TestPaths.repository + "/SDK/Python/agentruntime.py"))
        let manifest = try JSONValue.parse(FileManager.default.contents(atPath: directory + "/modules/struct/module.json") ?? Data())
        #expect(manifest["protocol"] == "jsonl/1")
        #expect(manifest["process_types"]?["struct_summary"]?["kind"] == "task")
        let settings = try JSONValue.parse(FileManager.default.contents(atPath: directory + "/settings.json") ?? Data())
        #expect(settings["enabled_modules"]?.arrayValue?.contains("struct") == true)
        #expect(settings["processes"]?["chat"]?["logic_adapters"]?.arrayValue?.contains("struct.struct_adapter") == true)
        #expect(settings["tasks"]?["struct_summary"]?["type"] == "struct.struct_summary")

        // The module's own tests pass where it was written.
        let tested = try runProgram("/usr/bin/env", ["python3", "-m", "unittest", "-v"], in: directory + "/modules/struct",
                                    environment: ["PYTHONDONTWRITEBYTECODE": "1"])
        #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
        #expect(tested.stderr.contains("Ran 5 tests"), "\(tested.stderr)")
    }

    @Test func pythonModulesRefuseEmptyAndBadNamesButNotSwiftKeywords() throws {
        let directory = TestPaths.temporaryDirectory("python-refuse") + "/agent"
        #expect(try runProgram("create-agent", [directory]).status == 0)
        let empty = try runProgram("add-agent-module", ["sensor", "--language", "python", "--empty"], in: directory)
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("--empty writes compiling Swift skeletons"), "\(empty.stderr)")
        let bad = try runProgram("add-agent-module", ["my-sensor", "--language", "python"], in: directory)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("it names a folder and the prefix of its process types"), "\(bad.stderr)")
        let unknown = try runProgram("add-agent-module", ["sensor", "--language", "cobol"], in: directory)
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("cobol"), "\(unknown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/modules/sensor"))
        #expect(ModuleAdder.nameProblem("struct", language: .python) == nil)
        #expect(ModuleAdder.nameProblem("struct", language: .swift) != nil)
    }

    /// From nothing to a running Python module: create-agent, add-agent-module --language
    /// python, then agent-control runs its programs next to the runtime's own modules: events,
    /// an alert path, a chat answer from the adapter and a task run through the queue.
    @Test func theGeneratedAgentRunsThePythonModuleEndToEnd() throws {
        let directory = TestPaths.temporaryDirectory("python-generated") + "/station"
        #expect(try runProgram("create-agent", [directory]).status == 0)
        let added = try runProgram("add-agent-module", ["weather", "--language", "python"], in: directory)
        #expect(added.status == 0, "\(added.stderr)")
        let settingsFile = directory + "/settings.json"
        let valid = try runProgram("validate-settings", ["--settings", settingsFile, "--no-build"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")

        let agent = try AgentRun(settings: try String(contentsOfFile: settingsFile, encoding: .utf8), arguments: ["--json"], directory: directory)
        let reading = agent.waitForLine(timeout: 120) { $0.contains(#""type":"weather_reading""#) }
        #expect(reading?.contains(#""source":"weather""#) == true, "\(agent.transcript)")
        #expect(agent.waitForLine { $0.contains(#""type":"trade""#) } != nil, "\(agent.transcript)")
        // The Python adapter answers through the chatbot's routing. (It subscribes to the
        // readings; the host does not deliver events to an adapter's program yet, so it may say
        // there is none.)
        let answered = waitFor(timeout: 60) { () -> String? in
            let answer = try? runProgram("agent-control", ["chat", "what is the latest weather reading?", "--settings", settingsFile])
            return answer.flatMap { $0.stdout.hasPrefix("bot> Hello from weather. ") ? $0.stdout : nil }
        }
        #expect(answered != nil, "\(agent.transcript)")
        // The task handler through the task queue; a bad input refused at its pointer.
        let ran = try runProgram("agent-control", ["task", "run", "weather_summary", "--input", #"{"values": [3, 5, 10]}"#, "--wait", "--json",
                                                   "--settings", settingsFile], timeout: 120)
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)\n\(agent.transcript)")
        let run = try JSONValue.parse(ran.stdout)
        #expect(run["status"] == "succeeded", "\(ran.stdout)")
        #expect(run["output"] == ["count": 3, "minimum": 3, "maximum": 10, "mean": 6], "\(ran.stdout)")
        let refused = try runProgram("agent-control", ["task", "run", "weather_summary", "--input", #"{"values": []}"#, "--settings", settingsFile])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("/input/values"), "\(refused.stderr)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    /// Polls `probe` until it gives a value or `timeout` passes.
    private func waitFor<T>(timeout: Double, _ probe: () -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let value = probe() { return value }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return nil
    }
}
