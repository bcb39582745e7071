import AgentTestSupport
import AgentVersion
import Foundation
import Testing

/// scripts/package-deb.sh on the products already built (`--no-build`, so the test costs no
/// release build), installed into a fresh root with dpkg (`--root`, maintainer scripts run
/// without chroot with DPKG_ROOT set), upgraded, removed and purged.
@Suite(.ownThreads, .serialized) struct DebianPackageTests {
    static let dpkgFound = ["/usr/bin/dpkg", "/usr/bin/dpkg-deb"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    static let runsAsRoot = getuid() == 0
    /// Debian's checker; .ci/run installs it, so there its absence fails the test.
    static let lintian = FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") ? "/usr/bin/lintian" : nil

    /// Runs a command to its end; throws with its output when it fails.
    @discardableResult
    private func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ProgramResult {
        // A package's build takes minutes on a loaded machine (300 s, the default, lapsed).
        let result = try runProgram(program, arguments, environment: environment, timeout: 900)
        guard result.status == 0 else {
            throw PackageTestFailure(description: "\(program) \(arguments.joined(separator: " ")) exited \(result.status):\n\(result.stdout)\(result.stderr)")
        }
        return result
    }

    private func build(revision: Int, into output: String) throws -> String {
        // Under a builder's narrow umask, which must not narrow what the package holds (lintian
        // reports a file not 0644, a folder not 0755).
        let result = try run("/bin/sh",
                             ["-c", #"umask 077 && exec "$0" "$@""#, TestPaths.repository + "/scripts/package-deb.sh", "--no-build", "--build-dir", TestPaths.products, "--output", output, "--revision", "\(revision)",
                              // The debug products are large; xz would take minutes on a loaded machine.
                              "--compression", "none"],
                             // A maintainer address lintian takes (its default, @localhost, it reports).
                             environment: ["DEBEMAIL": "packages@agentruntime.invalid"])
        let path = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(FileManager.default.fileExists(atPath: path), "\(result.stdout)\(result.stderr)")
        return path
    }

    /// A root with nothing installed: dpkg's database and the account files useradd edits.
    private func freshRoot() throws -> String {
        let root = TestPaths.temporaryDirectory("debroot")
        let files = FileManager.default
        for folder in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log", "etc", "usr/bin", "usr/sbin"] {
            try files.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for (file, text) in [("var/lib/dpkg/status", ""), ("var/lib/dpkg/available", ""),
                             ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"), ("etc/group", "root:x:0:\n"),
                             ("etc/shadow", "root:*:19000:0:99999:7:::\n"), ("etc/gshadow", "root:*::\n")] {
            try text.write(toFile: root + "/" + file, atomically: true, encoding: .utf8)
        }
        return root
    }

    /// dpkg on `root`: scripts run without chroot (the root has no shell of its own) and the
    /// runtime's dependencies (libc6, libsqlite3-0) are not in that root's database.
    @discardableResult
    private func dpkg(_ root: String, _ arguments: [String]) throws -> ProgramResult {
        try run("/usr/bin/dpkg", ["--root", root, "--force-script-chrootless", "--force-depends", "--force-not-root"] + arguments)
    }

    /// lintian finds nothing but what the package's overrides explain (and, built uncompressed
    /// for the test's speed, the compression it would have). Where CI runs, it must be there.
    private func expectLintianClean(_ package: String) throws {
        guard let lintian = Self.lintian else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "lintian is not installed (apt-get install lintian); .ci/run installs it")
            return
        }
        let result = try runProgram(lintian, ["--tag-display-limit", "0", "--suppress-tags",
                                              "uses-no-compression-for-control-tarball,uses-no-compression-for-data-tarball", package], timeout: 600)
        let tags = (result.stdout + result.stderr).split(separator: "\n").filter { $0.hasPrefix("E: ") || $0.hasPrefix("W: ") }
        #expect(result.status == 0 && tags.isEmpty, "lintian: \(result.stdout)\(result.stderr)")
    }

    /// The installed binaries carry no debug sections, still run, and name their debug file,
    /// which is kept beside the package with the debug information.
    private func expectStripped(_ folder: String, debugFolder: String) throws {
        for file in ["agent-control", "agent-worker", "libsample.so"] {
            let sections = try run("/usr/bin/readelf", ["-S", "-W", folder + "/" + file]).stdout
            #expect(!sections.contains(".debug_info") && sections.contains(".gnu_debuglink"), "\(file) is not stripped:\n\(sections)")
            let kept = try run("/usr/bin/readelf", ["-S", "-W", debugFolder + "/" + file + ".debug"]).stdout
            #expect(kept.contains(".debug_info"), "\(debugFolder)/\(file).debug holds no debug information:\n\(kept)")
        }
        let version = try run(folder + "/agent-control", ["--version"]).stdout
        #expect(version.contains(AgentVersion.current), "the stripped agent-control printed \(version)")
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    private func users(_ root: String) throws -> [String] {
        try String(contentsOfFile: root + "/etc/passwd", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("agentruntime:") }.map(String.init)
    }

    @Test(.enabled(if: dpkgFound, "dpkg and dpkg-deb are not installed (apt-get install dpkg)"),
          .enabled(if: runsAsRoot, "installing into a root with dpkg and creating its user need root"))
    func packageInstallsUpgradesAndRemovesInAFreshRoot() throws {
        let output = TestPaths.temporaryDirectory("deb")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let first = try build(revision: 1, into: output)
        let second = try build(revision: 2, into: output)

        // What the package holds, and its version: the runtime's.
        let version = try run("/usr/bin/dpkg-deb", ["--field", first, "Version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version == "\(AgentVersion.current)-1")
        let contents = try run("/usr/bin/dpkg-deb", ["--contents", first]).stdout
        for path in ["./usr/bin/agent-control -> ../lib/agentruntime/agent-control", "./usr/lib/agentruntime/agent-worker",
                     "./usr/lib/agentruntime/libsystem.so", "./usr/lib/agentruntime/libsample.so",
                     "./usr/share/agentruntime/Templates/agent/", "./usr/share/agentruntime/SDK/Package.swift",
                     // What the dashboard's /docs reads.
                     "./usr/share/agentruntime/README.md", "./usr/share/agentruntime/docs/reference/settings.md",
                     "./usr/share/agentruntime/benchmarks/README.md",
                     "./usr/share/man/man1/agent-control.1.gz", "./usr/share/man/man1/create-agent.1.gz",
                     "./usr/share/bash-completion/completions/agent-control", "./usr/share/zsh/vendor-completions/_agent-control",
                     "./usr/share/fish/vendor_completions.d/agent-control.fish", "./lib/systemd/system/agentruntime@.service"] {
            #expect(contents.contains(path), "\(path) not in the package:\n\(contents)")
        }
        #expect(contents.contains("root/root"), "files owned by root:\n\(contents)")

        try expectLintianClean(first)

        let root = try freshRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try dpkg(root, ["--install", first])
        #expect(exists(root + "/usr/lib/agentruntime/agent-control"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/usr/bin/create-agent") == "../lib/agentruntime/create-agent")
        #expect(exists(root + "/usr/share/agentruntime/SDK/Package.swift"))
        #expect(try String(contentsOfFile: root + "/usr/share/doc/agentruntime/copyright", encoding: .utf8)
            .hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"))
        try expectStripped(root + "/usr/lib/agentruntime", debugFolder: String(first.dropLast(".deb".count)) + ".debug")
        let page = try run("/bin/sh", ["-c", "gzip -dc '\(root)/usr/share/man/man1/agent-control.1.gz'"]).stdout
        #expect(!page.contains("\n\n"), "a blank line in the man page (mdoc warns of each)")
        #expect(page.contains(".Dt AGENT-CONTROL 1") && page.contains("console"), "\(page.prefix(400))")
        let completion = try String(contentsOfFile: root + "/usr/share/bash-completion/completions/agent-control", encoding: .utf8)
        #expect(completion.contains("complete") && completion.contains("console"))
        let unit = try String(contentsOfFile: root + "/lib/systemd/system/agentruntime@.service", encoding: .utf8)
        // agent-control's own template, run by the user the package makes, from the linked commands.
        #expect(unit.contains("Type=notify") && unit.contains("User=agentruntime") && unit.contains("/var/lib/agentruntime/%i")
                && unit.contains("ExecStart=/usr/bin/agent-control console"), "\(unit)")
        // The system user, with its folder.
        let user = try #require(try users(root).first, "no agentruntime user in \(root)/etc/passwd")
        let fields = user.split(separator: ":", omittingEmptySubsequences: false)
        #expect(fields[5] == "/var/lib/agentruntime" && (Int(fields[2]) ?? 1000) < 1000, "\(user)")
        var info = stat()
        #expect(stat(root + "/var/lib/agentruntime", &info) == 0 && Int(info.st_uid) == Int(fields[2]), "\(user)")

        // An upgrade keeps the one user and the agents' folder.
        try FileManager.default.createDirectory(atPath: root + "/var/lib/agentruntime/demo", withIntermediateDirectories: true)
        try dpkg(root, ["--install", second])
        #expect(try run("/usr/bin/dpkg-query", ["--admindir", root + "/var/lib/dpkg", "--showformat", "${Version}", "--show", "agentruntime"]).stdout
                == "\(AgentVersion.current)-2")
        #expect(try users(root).count == 1)
        #expect(exists(root + "/var/lib/agentruntime/demo"))

        // Removal takes the files; purge keeps the user while an agent's folder is left.
        try dpkg(root, ["--remove", "agentruntime"])
        for path in ["/usr/lib/agentruntime/agent-control", "/usr/bin/agent-control", "/usr/share/agentruntime/SDK/Package.swift",
                     "/usr/share/man/man1/agent-control.1.gz", "/lib/systemd/system/agentruntime@.service"] {
            #expect(!exists(root + path), "\(path) left after removal")
        }
        #expect(try users(root).count == 1)
        let kept = try dpkg(root, ["--purge", "agentruntime"])
        #expect(try users(root).count == 1)
        #expect(exists(root + "/var/lib/agentruntime/demo"))
        #expect(kept.stderr.contains("still holds agents"), "\(kept.stderr)")

        // With no agent left, purge removes the folder, the user and its group.
        try dpkg(root, ["--install", second])
        try FileManager.default.removeItem(atPath: root + "/var/lib/agentruntime/demo")
        try dpkg(root, ["--purge", "agentruntime"])
        #expect(try users(root).isEmpty)
        #expect(!(try String(contentsOfFile: root + "/etc/group", encoding: .utf8)).contains("agentruntime:"))
        #expect(!exists(root + "/var/lib/agentruntime"))
        #expect(!exists(root + "/usr/lib/agentruntime"))
    }
}

struct PackageTestFailure: Error, CustomStringConvertible {
    var description: String
}
