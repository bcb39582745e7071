import AgentTestSupport
import Foundation
import Testing

/// `agent-control unit` and the unit `create-agent` writes, checked by systemd's own verifier
/// where it is installed.
@Suite(.ownThreads) struct ServiceUnitTests {
    static let analyzer = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func agentFolder(_ name: String) throws -> String {
        let directory = TestPaths.temporaryDirectory("unit") + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed"}}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        return directory
    }

    @Test func unitRunsTheAgentAsANotifyServiceWithItsOwnTeardownAndHardening() throws {
        let directory = try Self.agentFolder("feeds")
        let result = try runProgram("agent-control", ["unit", "--user", "svc", "--watchdog", "20"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Set(result.stdout.split(separator: "\n").map(String.init))
        for expected in [
            "Type=notify", "NotifyAccess=main", "WatchdogSec=20", "Restart=on-failure", "RestartPreventExitStatus=2",
            "ExecReload=/bin/kill -HUP $MAINPID", "Delegate=yes", "KillMode=mixed", "User=svc", "Group=svc",
            "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "StateDirectory=agentruntime/feeds",
            "LogsDirectory=agentruntime/feeds", "ReadWritePaths=\(directory)", "WorkingDirectory=\(directory)",
            "ExecStart=\(TestPaths.products)/agent-control console --settings \(directory)/settings.json --no-build --configuration release --quiet",
        ] {
            #expect(lines.contains(expected), "missing \(expected) in\n\(result.stdout)")
        }
        #expect(result.stdout.contains("agentruntime-feeds.service"))

        let none = try runProgram("agent-control", ["unit", "--agent-dir", directory, "--watchdog", "0", "--name", "feeds two"])
        #expect(none.status == 0, "\(none.stderr)")
        #expect(!none.stdout.contains("\nWatchdogSec="))
        #expect(none.stdout.contains("StateDirectory=agentruntime/feeds-two"))
    }

    @Test func unitNamesTheBinaryItRunsAndWarnsOfAFolderUnderTmpAndADebugBuild() throws {
        let directory = try Self.agentFolder("feeds")
        let result = try runProgram("agent-control", ["unit"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("# It runs \(TestPaths.products)/agent-control."), "\(result.stdout)")
        if directory.hasPrefix("/tmp/") {
            #expect(result.stderr.contains("warning: the agent's folder \(directory) is under /tmp, which the unit's PrivateTmp=yes hides"), "\(result.stderr)")
        }
        if TestPaths.products.hasSuffix("/debug") {
            #expect(result.stderr.contains("warning: \(TestPaths.products)/agent-control is a debug build"), "\(result.stderr)")
        }
        let elsewhere = try runProgram("agent-control", ["unit", "--agent-dir", "/srv/agents/feeds", "--binaries", "/usr/bin"], in: directory)
        #expect(elsewhere.status == 0 && elsewhere.stderr.isEmpty, "\(elsewhere.stderr)")
    }

    @Test func badUnitValuesAreRefusedWithWhatToDo() throws {
        let directory = try Self.agentFolder("feeds")
        let result = try runProgram("agent-control", ["unit", "--user", "no body", "--watchdog=-1"], in: directory)
        #expect(result.status == 64, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("--user no body: expected a user or group name"), "\(result.stderr)")
        #expect(result.stderr.contains("--watchdog -1: expected seconds ≥ 0"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// A name with a line break would write lines of its own into the unit (an
    /// `ExecStartPre=+…`, run as root): refused, nothing printed.
    @Test func aNameThatWouldWriteLinesOfItsOwnIntoTheUnitIsRefused() throws {
        let directory = try Self.agentFolder("feeds")
        for name in ["x\n[Service]\nExecStartPre=+/bin/touch /tmp/owned", "a%h", "line\u{2028}break"] {
            let result = try runProgram("agent-control", ["unit", "--name", name], in: directory)
            #expect(result.status == 64, "\(name.debugDescription): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("--name") && result.stderr.contains("cannot be written in the unit"), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "\(result.stdout)")
        }
    }

    @Test func createAgentWritesTheSameUnitAsAgentControlPrints() throws {
        let directory = TestPaths.temporaryDirectory("unit") + "/reports"
        let created = try runProgram("create-agent", [directory])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("  agentruntime-reports.service\n"), "\(created.stdout)")
        let written = try String(contentsOfFile: directory + "/agentruntime-reports.service", encoding: .utf8)
        let printed = try runProgram("agent-control", ["unit"], in: directory)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(written == printed.stdout)
        let readme = try String(contentsOfFile: directory + "/README.md", encoding: .utf8)
        #expect(readme.contains("agentruntime-reports.service"))
    }

    @Test(.enabled(if: analyzer != nil, "systemd-analyze is not installed (Debian's systemd package has it); the unit is not verified here"))
    func systemdAnalyzeVerifiesTheUnit() throws {
        let directory = try Self.agentFolder("verified")
        let printed = try runProgram("agent-control", ["unit"], in: directory)
        #expect(printed.status == 0, "\(printed.stderr)")
        let folder = TestPaths.temporaryDirectory("unit-verify")
        let file = folder + "/agentruntime-verified.service"
        try printed.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        // Offline: only this file is loaded, nothing is asked of a running systemd.
        let verified = try runProgram(Self.analyzer!, ["verify", "--man=no", file], in: folder,
                                      environment: ["SYSTEMD_LOG_LEVEL": "notice", "SYSTEMD_UNIT_PATH": folder + ":"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        // Every complaint about the unit names its file: an unknown key, a bad value.
        let complaints = (verified.stdout + verified.stderr).split(separator: "\n").filter { $0.contains("agentruntime-verified.service") }
        #expect(complaints.isEmpty, "\(complaints.joined(separator: "\n"))")

        // The verifier is not blind: a misspelt key in the same unit is reported.
        let broken = folder + "/agentruntime-broken.service"
        try printed.stdout.replacingOccurrences(of: "NotifyAccess=main", with: "NotifyAcess=main").write(toFile: broken, atomically: true, encoding: .utf8)
        let checked = try runProgram(Self.analyzer!, ["verify", "--man=no", broken], in: folder,
                                     environment: ["SYSTEMD_LOG_LEVEL": "notice", "SYSTEMD_UNIT_PATH": folder + ":"])
        #expect((checked.stdout + checked.stderr).contains("NotifyAcess"), "\(checked.stdout)\(checked.stderr)")

        // The template unit (a package's agentruntime@.service), verified as the instance demo.
        let template = try runProgram("agent-control", ["unit", "--template", "--binaries", TestPaths.products])
        #expect(template.status == 0, "\(template.stderr)")
        #expect(template.stdout.contains("\nStateDirectory=agentruntime/%i\n") && template.stdout.contains("--settings /var/lib/agentruntime/%i/settings.json"))
        try template.stdout.write(toFile: folder + "/agentruntime@.service", atomically: true, encoding: .utf8)
        let instance = try runProgram(Self.analyzer!, ["verify", "--man=no", folder + "/agentruntime@demo.service"], in: folder,
                                      environment: ["SYSTEMD_LOG_LEVEL": "notice", "SYSTEMD_UNIT_PATH": folder + ":"])
        #expect(instance.status == 0, "\(instance.stdout)\(instance.stderr)")
        #expect(!(instance.stdout + instance.stderr).contains("agentruntime@"), "\(instance.stdout)\(instance.stderr)")
    }
}
