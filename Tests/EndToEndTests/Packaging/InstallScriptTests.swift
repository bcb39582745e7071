import AgentTestSupport
import Foundation
import Testing

/// scripts/install.sh on the products already built (`--no-build`): executables, templates and
/// SDK, man pages and completions under a prefix.
@Suite(.ownThreads) struct InstallScriptTests {
    @Test
    func installPutsManPagesAndCompletionsUnderThePrefix() throws {
        let prefix = TestPaths.temporaryDirectory("prefix")
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        // By an installer whose umask (077) must not narrow what every user reads.
        let result = try runProgram("/bin/sh", ["-c", #"umask 077 && exec "$0" "$@""#, TestPaths.repository + "/scripts/install.sh",
                                                "--prefix", prefix, "--no-build", "--build-dir", TestPaths.products])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for path in ["share/agentruntime/Templates", "share/agentruntime/SDK/Package.swift", "share/agentruntime/docs", "share/bash-completion/completions/agent-control",
                     "share/man/man1/agent-control.1"] {
            var info = stat()
            #expect(stat(prefix + "/" + path, &info) == 0 && info.st_mode & 0o044 == 0o044, "\(path) is \(String(info.st_mode & 0o777, radix: 8)): not readable by all")
        }
        for command in ["agent-control", "validate-settings", "create-agent", "add-agent-module"] {
            for path in ["bin/\(command)", "share/man/man1/\(command).1", "share/bash-completion/completions/\(command)",
                         "share/zsh/site-functions/_\(command)", "share/fish/vendor_completions.d/\(command).fish"] {
                #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path) not installed")
            }
        }
        for path in ["bin/agent-worker", "bin/libsystem.so", "share/agentruntime/SDK/Package.swift", "share/agentruntime/SDK/Python/agentruntime.py", "share/agentruntime/Templates/agent"] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path) not installed")
        }
        let page = try String(contentsOfFile: prefix + "/share/man/man1/agent-control.1", encoding: .utf8)
        #expect(page.contains(".Nm agent-control") && page.contains("diagnostics"))
        // bash loads the completion and completes the subcommands.
        let bash = try runProgram("/bin/bash", ["-c", """
            source '\(prefix)/share/bash-completion/completions/agent-control'
            COMP_WORDS=(agent-control sta); COMP_CWORD=1; COMP_LINE='agent-control sta'; COMP_POINT=${#COMP_LINE}
            "$(complete -p agent-control | sed -E 's/.*-F ([^ ]+).*/\\1/')" agent-control sta agent-control
            printf '%s\\n' "${COMPREPLY[@]}"
            """])
        #expect(bash.stdout.contains("start") && bash.stdout.contains("status"), "\(bash.stdout)\(bash.stderr)")
        // The installed create-agent finds its templates in PREFIX/share/agentruntime.
        let agent = TestPaths.temporaryDirectory("installed-agent")
        let created = try runProgram(prefix + "/bin/create-agent", [agent + "/station"])
        #expect(created.status == 0, "\(created.stderr)")
        let package = try String(contentsOfFile: agent + "/station/Package.swift", encoding: .utf8)
        #expect(package.contains(prefix + "/share/agentruntime/SDK"), "\(package)")
    }
}
