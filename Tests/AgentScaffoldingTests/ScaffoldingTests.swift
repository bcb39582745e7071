import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentScaffolding

/// create-agent and add-agent-module as a user runs them, and the agent they generate built,
/// tested and run for real.
@Suite(.ownThreads) struct ScaffoldingTests {
    static func run(_ program: String, _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:]) throws -> ProgramResult {
        // Builds of a generated agent take minutes on a loaded machine (300 s, the default, lapsed).
        try runProgram(program, arguments, in: directory, environment: environment, timeout: 900)
    }

    @Test func createAgentWritesAValidAgentAndNeverOverwritesSilently() throws {
        let directory = TestPaths.temporaryDirectory("create") + "/my-agent"
        let created = try Self.run("create-agent", [directory])
        #expect(created.status == 0, "\(created.stderr)")
        for file in ["README.md", "settings.json", "Package.swift", ".gitignore"] {
            #expect(created.stdout.contains("  \(file)\n"))
            #expect(FileManager.default.fileExists(atPath: directory + "/" + file))
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/modules"))
        let package = try String(contentsOfFile: directory + "/Package.swift", encoding: .utf8)
        #expect(package.contains("name: \"my-agent\""))
        #expect(package.contains(".package(path: \"\(TestPaths.repository)/SDK\")"))
        let readme = try String(contentsOfFile: directory + "/README.md", encoding: .utf8)
        #expect(readme.contains("systemd"))

        let valid = try Self.run("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")

        let again = try Self.run("create-agent", [directory])
        #expect(again.status == 1)
        #expect(again.stderr.contains("exist already"))
        #expect(again.stderr.contains("pass --force"))
        try "changed".write(toFile: directory + "/README.md", atomically: true, encoding: .utf8)
        let forced = try Self.run("create-agent", [directory, "--force", "--name", "renamed"])
        #expect(forced.status == 0)
        #expect(try String(contentsOfFile: directory + "/README.md", encoding: .utf8).hasPrefix("# renamed"))
    }

    @Test func addAgentModuleRefusesBadNamesOtherFoldersAndExistingModules() throws {
        let directory = TestPaths.temporaryDirectory("add") + "/agent"
        #expect(try Self.run("create-agent", [directory]).status == 0)
        for (name, message) in [("9lives", "is not a valid module name"), ("my-module", "is not a valid module name"),
                                ("struct", "is a Swift keyword"), ("Foundation", "is taken"), ("sensorTests", "must not end in Tests")] {
            let result = try Self.run("add-agent-module", [name], in: directory)
            #expect(result.status == 1)
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
        }
        let elsewhere = try Self.run("add-agent-module", ["sensor"], in: TestPaths.temporaryDirectory("not-an-agent"))
        #expect(elsewhere.status == 1)
        #expect(elsewhere.stderr.contains("not an agent folder"))

        // From the agent's modules/ folder works too.
        let added = try Self.run("add-agent-module", ["sensor", "--empty", "--no-enable"], in: directory + "/modules")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("modules/sensor/Sources/SensorSource.swift"))
        #expect(!added.stdout.contains("settings.json"))
        let twice = try Self.run("add-agent-module", ["sensor"], in: directory)
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("module \"sensor\" exists already; nothing was written"))
        let package = try String(contentsOfFile: directory + "/Package.swift", encoding: .utf8)
        #expect(package.components(separatedBy: "\"sensor\",").count == 2)
    }

    @Test func addAgentModuleEditsACompactSettingsFileInPlace() throws {
        let directory = TestPaths.temporaryDirectory("add-compact") + "/agent"
        #expect(try Self.run("create-agent", [directory]).status == 0)
        let compact = #"{"enabled_modules":["system","sample"],"processes":{"trades":{"type":"trade_feed","interval":0.50},"chat":{"type":"chatbot","logic_adapters":["features"]}}}"#
        try compact.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        chmod(directory + "/settings.json", 0o640)
        // Read by a service through its group: the edit keeps the group (where this user may
        // give it, as root here) and the mode exactly, under a umask that would narrow it.
        let group: gid_t = getuid() == 0 ? 1 : getgid()
        _ = chown(directory + "/settings.json", getuid(), group)
        let added = try Self.run("/bin/sh", ["-c", #"umask 077 && exec "$0" sensor"#, TestPaths.products + "/add-agent-module"], in: directory)
        #expect(added.status == 0, "\(added.stderr)")
        let edited = try String(contentsOfFile: directory + "/settings.json", encoding: .utf8)
        #expect(edited == #"{"enabled_modules":["system","sample","sensor"],"processes":{"trades":{"type":"trade_feed","interval":0.50},"chat":{"type":"chatbot","logic_adapters":["features","sensor.sensor_adapter"]},"sensor":{"type":"sensor_source","enabled":true,"interval":1},"sensor_alerts":{"type":"sensor_monitor","enabled":true,"threshold":80}},"tasks":{"sensor_summary":{"type":"sensor.sensor_summary","timeout":60,"description":"Summarizes the values given as input."}}}"#, "\(edited)")
        var info = stat()
        #expect(stat(directory + "/settings.json", &info) == 0 && info.st_mode & 0o777 == 0o640, "mode \(String(info.st_mode & 0o777, radix: 8))")
        #expect(info.st_gid == group, "the group \(group) became \(info.st_gid)")
    }

    @Test func addAgentModuleKeepsTheCreatedSettingsFileAsWrittenAndAddsLinesLikeItsOwn() throws {
        let directory = TestPaths.temporaryDirectory("add-expanded") + "/agent"
        #expect(try Self.run("create-agent", [directory]).status == 0)
        let before = try String(contentsOfFile: directory + "/settings.json", encoding: .utf8)
        #expect(try Self.run("add-agent-module", ["sensor"], in: directory).status == 0)
        let after = try String(contentsOfFile: directory + "/settings.json", encoding: .utf8)
        var expected = before.replacingOccurrences(of: #""enabled_modules": ["system", "sample"]"#, with: #""enabled_modules": ["system", "sample", "sensor"]"#)
        expected = expected.replacingOccurrences(of: #""sample.trades_counter"]}"#, with: """
        "sample.trades_counter", "sensor.sensor_adapter"]},
            "sensor": {"type": "sensor_source", "enabled": true, "interval": 1},
            "sensor_alerts": {"type": "sensor_monitor", "enabled": true, "threshold": 80}
        """)
        // The module's task, in a "tasks" object of its own at the end.
        expected = String(expected.dropLast(3)) + ",\n  \"tasks\": {\n    \"sensor_summary\": {\n      \"type\": \"sensor.sensor_summary\",\n"
            + "      \"timeout\": 60,\n      \"description\": \"Summarizes the values given as input.\"\n    }\n  }\n}\n"
        #expect(expected != before)
        #expect(after == expected, "\(after)")
    }

    @Test func missingTemplatesAreAClearError() throws {
        let result = try Self.run("create-agent", [TestPaths.temporaryDirectory("nohome")], environment: ["AGENT_RUNTIME_HOME": "/nonexistent"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("AGENT_RUNTIME_HOME=/nonexistent has no Templates/ and SDK/"))
    }

    @Test func templatesAreFoundInABuildTreeAnInstalledCopyAPackageOrTheEnvironment() throws {
        // An installed copy: <prefix>/bin/create-agent and <prefix>/share/agentruntime.
        let prefix = TestPaths.temporaryDirectory("prefix")
        let share = prefix + "/share/agentruntime"
        try FileManager.default.createDirectory(atPath: share + "/Templates/agent", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: share + "/SDK", withIntermediateDirectories: true)
        try "// swift-tools-version: 6.0".write(toFile: share + "/SDK/Package.swift", atomically: true, encoding: .utf8)
        #expect(try RuntimeHome.locate(environment: [:], executable: prefix + "/bin/create-agent").path == share)
        // The Debian package: <prefix>/lib/agentruntime/create-agent.
        #expect(try RuntimeHome.locate(environment: [:], executable: prefix + "/lib/agentruntime/create-agent").path == share)
        // A build tree: the checkout above .build/<triple>/debug.
        let built = try RuntimeHome.locate(environment: [:], executable: TestPaths.products + "/create-agent")
        #expect(built.path == TestPaths.repository)
        // The environment wins.
        #expect(try RuntimeHome.locate(environment: ["AGENT_RUNTIME_HOME": share], executable: "/usr/bin/create-agent").path == share)
        #expect(throws: ScaffoldingError.self) { try RuntimeHome.locate(environment: [:], executable: "/usr/bin/create-agent") }
    }

    @Test func moduleNamesBecomeTypePrefixes() {
        #expect(ModuleAdder.typePrefix("weather") == "Weather")
        #expect(ModuleAdder.typePrefix("weather_station") == "WeatherStation")
        #expect(ModuleAdder.nameProblem("ok_name2") == nil)
    }

    /// From nothing to a running module: create-agent, add-agent-module, then the generated
    /// agent builds, its tests pass, and agent-control runs its module next to the runtime's.
    @Test func generatedAgentBuildsPassesItsTestsAndRuns() throws {
        let directory = TestPaths.temporaryDirectory("generated") + "/station"
        #expect(try Self.run("create-agent", [directory]).status == 0)
        #expect(try Self.run("add-agent-module", ["weather"], in: directory).status == 0)
        #expect(try Self.run("add-agent-module", ["quiet", "--empty"], in: directory).status == 0)
        let swift = ModuleLocatorPath.swift
        let built = try Self.run(swift, ["build", "--package-path", directory])
        #expect(built.status == 0, "\(built.stdout.suffix(3000))\(built.stderr.suffix(3000))")
        let tested = try Self.run(swift, ["test", "--package-path", directory])
        #expect(tested.status == 0, "\(tested.stdout.suffix(3000))\(tested.stderr.suffix(3000))")
        #expect(tested.stdout.contains("Test run with 7 tests"), "\(tested.stdout.suffix(2000))")

        let settings = try String(contentsOfFile: directory + "/settings.json", encoding: .utf8)
        let agent = try AgentRun(settings: settings, arguments: ["--json"], directory: directory)
        let reading = agent.waitForLine(timeout: 120) { $0.contains(#""type":"weather_reading""#) }
        #expect(reading?.contains(#""source":"weather""#) == true, "\(agent.transcript)")
        #expect(agent.waitForLine { $0.contains(#""type":"trade""#) } != nil)
        #expect(agent.waitForLines(onStderr: true, count: 9) { $0.contains("ready in") }.count == 9, "\(agent.transcript)")
        // The module's logic adapter answers in the agent's chat, from the store.
        Thread.sleep(forTimeInterval: 0.3)
        let answer = try runProgram("agent-control", ["chat", "what is the latest weather reading?", "--settings", directory + "/settings.json"])
        #expect(answer.stdout.hasPrefix("bot> Hello from weather. The latest reading is "), "\(answer.stdout)\(answer.stderr)")
        // The module's task handler, added to the settings' tasks: a run through the real
        // command line, in an executor worker of the module; a bad input is refused at its pointer.
        let listed = try runProgram("agent-control", ["task", "list", "--settings", directory + "/settings.json"])
        #expect(listed.stdout.contains("weather_summary  weather.weather_summary"), "\(listed.stdout)\(listed.stderr)")
        let ran = try runProgram("agent-control", ["task", "run", "weather_summary", "--input", #"{"values": [3, 5, 10]}"#, "--wait", "--json",
                                                   "--settings", directory + "/settings.json"], timeout: 120)
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)\n\(agent.transcript)")
        let run = try JSONValue.parse(ran.stdout)
        #expect(run["status"] == "succeeded", "\(ran.stdout)")
        #expect(run["output"] == ["count": 3, "minimum": 3, "maximum": 10, "mean": 6], "\(ran.stdout)")
        let refused = try runProgram("agent-control", ["task", "run", "weather_summary", "--input", #"{"values": []}"#,
                                                       "--settings", directory + "/settings.json"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("/input/values"), "\(refused.stderr)")
        #expect(agent.stop() == 0)
    }
}

/// The `swift` driver the tests use to build generated agents.
enum ModuleLocatorPath {
    static let swift: String = {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/swift"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "/opt/swift/usr/bin/swift"
    }()
}

extension ScaffoldingTests {
    /// A module named as one the agent already finds (the runtime's `system`, the built-in
    /// `chat`) would hide it and break create-agent's own settings: refused, nothing written,
    /// the settings still valid. A name must start with a letter.
    @Test func aModuleNameThatWouldHideAModuleTheAgentFindsIsRefused() throws {
        let directory = TestPaths.temporaryDirectory("taken") + "/station"
        #expect(try Self.run("create-agent", [directory]).status == 0)
        for (name, says) in [("system", "a module the agent already finds in"), ("sample", "a module the agent already finds in"),
                             ("chat", "the runtime's built-in module"), ("_x", "starting with a letter"),
                             ("System", #"differs only in the case of its letters from the module "system""#),
                             ("CHAT", "differs only in the case of its letters from the runtime's built-in module"),
                             ("CAgentModuleKit", "taken by a library the module imports")] {
            // A Python module's name names no Swift target: the SDK's names do not apply to it.
            if name == "CAgentModuleKit" {
                let refused = try Self.run("add-agent-module", [name], in: directory)
                #expect(refused.status != 0 && refused.stderr.contains(says), "\(refused.stderr)")
                continue
            }
            for language in ["swift", "python"] {
                let refused = try Self.run("add-agent-module", [name, "--language", language], in: directory)
                #expect(refused.status != 0, "\(name) \(language): \(refused.stdout)")
                #expect(refused.stderr.contains(says), "\(name) \(language): \(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory + "/modules/" + name), "\(name) \(language): a folder was written")
            }
        }
        // The agent's own modules likewise: one name in two cases is two modules only on a
        // case-sensitive disk, and one to a reader.
        #expect(try Self.run("add-agent-module", ["weather", "--language", "python"], in: directory).status == 0)
        let twin = try Self.run("add-agent-module", ["Weather", "--language", "python"], in: directory)
        #expect(twin.status != 0 && twin.stderr.contains(#"differs only in the case of its letters from the agent's module "weather""#), "\(twin.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/modules/Weather"))
        let valid = try Self.run("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
    }
}

extension ScaffoldingTests {
    /// A folder whose path a systemd unit cannot hold gets no unit, and create-agent says so;
    /// the `cd` it prints can be pasted into a shell as it is.
    @Test func aFolderWithASpaceGetsNoUnitAndCreateAgentSaysSoAndQuotesIt() throws {
        let directory = TestPaths.temporaryDirectory("spaced") + "/my agent"
        let created = try Self.run("create-agent", [directory])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("note: no systemd unit was written: --agent-dir \(directory.debugDescription): a path with spaces"), "\(created.stdout)")
        // A quote too: systemd reads it as the start of a quoted word.
        let quoted = TestPaths.temporaryDirectory("spaced") + "/q'x"
        let withQuote = try Self.run("create-agent", [quoted])
        #expect(withQuote.status == 0 && withQuote.stdout.contains("note: no systemd unit was written"), "\(withQuote.stdout)\(withQuote.stderr)")
        #expect(try !FileManager.default.contentsOfDirectory(atPath: quoted).contains { $0.hasSuffix(".service") })
        // A control character in the name is refused: it would be written into the files.
        let escape = try Self.run("create-agent", [TestPaths.temporaryDirectory("spaced") + "/e\u{1B}[31mx"])
        #expect(escape.status != 0 && escape.stderr.contains("has a control character"), "\(escape.stdout)\(escape.stderr)")
        #expect(created.stdout.contains("  cd '\(directory)'\n"), "\(created.stdout)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!files.contains { $0.hasSuffix(".service") }, "\(files)")
        #expect(files.contains("settings.json"))
    }

    /// A name whose unit file the folder cannot hold wrote four files and then failed ("File
    /// name too long"), and a second try said they existed: the unit is left out instead, and a
    /// file the folder cannot hold fails before anything is written.
    @Test func aNameTooLongForTheUnitGetsNoUnitAndATooLongFileWritesNothing() throws {
        let parent = TestPaths.temporaryDirectory("long-name")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let created = try Self.run("create-agent", [parent + "/agent", "--name", String(repeating: "n", count: 300)])
        #expect(created.status == 0, "\(created.stdout)\(created.stderr)")
        #expect(created.stdout.contains("note: no systemd unit was written: --name: the unit's name agentruntime-nnn"), "\(created.stdout)")
        #expect(FileManager.default.fileExists(atPath: parent + "/agent/settings.json"))

        let files: [(path: String, content: String)] = [("README.md", "a"), ("sub/" + String(repeating: "x", count: 256), "b")]
        #expect {
            _ = try FileWriter.write(files, into: parent + "/none", force: false)
        } throws: { error in
            "\(error)".contains("more than a file name may have (255); nothing was written")
        }
        #expect(!FileManager.default.fileExists(atPath: parent + "/none"), "nothing written, no folder made")
    }
}
