import Foundation

/// A systemd unit that runs an agent as a `Type=notify` service: `agent-control unit` prints
/// it and `create-agent` writes it into the new agent.
///
/// The supervisor tells systemd when it is ready, reloading and stopping, and pings the watchdog
/// from its loop; it stops its workers itself, in its own cgroup (`Delegate=yes`), so systemd
/// signals only it (`KillMode=mixed`).
public struct ServiceUnit: Sendable, Equatable {
    /// The agent's name: the unit is `agentruntime-<name>.service`.
    public var agentName: String
    /// The agent's folder (absolute): its settings.json, modules and `.agent/` (run folder,
    /// store), all written by the service.
    public var agentDirectory: String
    /// The folder of `agent-control` (absolute).
    public var binaries: String
    /// The dedicated user the agent runs as (and its group, unless ``group`` is set).
    public var user = "agentruntime"
    public var group: String?
    /// `WatchdogSec=`: systemd restarts the agent when its loop has not pinged for this long
    /// (0: no watchdog).
    public var watchdogSeconds = 30
    /// `TimeoutStopSec=`: the longest the agent may take to stop its workers before systemd
    /// kills what is left (give it more than the longest `stop_timeout` of the settings).
    public var stopTimeoutSeconds = 120

    /// A template unit, `agentruntime@.service`: `agentruntime@NAME` runs the agent in
    /// `/var/lib/agentruntime/NAME` (its StateDirectory), as a package installs it.
    public private(set) var isTemplate = false

    public init(agentName: String, agentDirectory: String, binaries: String) {
        self.agentName = agentName
        self.agentDirectory = agentDirectory
        self.binaries = binaries
    }

    /// The template unit for agents kept in `/var/lib/agentruntime/<instance>`.
    public static func template(binaries: String) -> ServiceUnit {
        var unit = ServiceUnit(agentName: "%i", agentDirectory: "/var/lib/agentruntime/%i", binaries: binaries)
        unit.isTemplate = true
        return unit
    }

    /// `agentruntime-<name>.service` (the name made of what unit names allow), or
    /// `agentruntime@.service` for the template.
    public var fileName: String { isTemplate ? "agentruntime@.service" : "agentruntime-\(Self.unitWord(agentName)).service" }

    /// What is wrong with the values, if anything (each a sentence saying how to fix it).
    public var problems: [String] {
        var found: [String] = []
        for (option, path) in [("--agent-dir", agentDirectory), ("--binaries", binaries)] where !path.hasPrefix("/") {
            found.append("\(option) \(path): expected an absolute path (systemd runs the agent from /)")
        }
        for (option, path) in [("--agent-dir", isTemplate ? "/" : agentDirectory), ("--binaries", binaries)]
        where path.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || "\"'\\%$".unicodeScalars.contains($0) })
            || path.contains(where: \.isWhitespace) {
            found.append("\(option) \(path.debugDescription): a path with spaces, quotes, backslashes, control characters, % or $ would need escaping in the unit; use a path without them")
        }
        // Written in the unit's comments and Description: a line break would start lines of its own
        // (an ExecStartPre=+ run as root), and systemd expands % in Description.
        if !isTemplate, agentName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .lineSeparator
            || $0.properties.generalCategory == .paragraphSeparator || $0 == "%" }) {
            found.append("--name \(agentName.debugDescription): a name with control characters, line breaks or % cannot be written in the unit; use letters, digits, - and _")
        }
        // systemd's limit on a unit's name, and a file name's (NAME_MAX).
        if fileName.utf8.count > 255 {
            found.append("--name: the unit's name \(fileName.prefix(40))… would be \(fileName.utf8.count) bytes; systemd takes at most 255: use a shorter name")
        }
        for (option, name) in [("--user", user), ("--group", group ?? user)] where !Self.isUserName(name) {
            found.append("\(option) \(name): expected a user or group name (letters, digits, _ and -, starting with a letter or _, at most 31 characters)")
        }
        if watchdogSeconds < 0 { found.append("--watchdog \(watchdogSeconds): expected seconds ≥ 0 (0: no watchdog)") }
        if stopTimeoutSeconds < 1 { found.append("--stop-timeout \(stopTimeoutSeconds): expected seconds ≥ 1") }
        return found
    }

    /// What would work, but not as the person likely means it (each a sentence saying what
    /// to do instead); `agent-control unit` prints them on stderr.
    public var warnings: [String] {
        var found: [String] = []
        if !isTemplate, ["/tmp", "/var/tmp"].contains(where: { agentDirectory == $0 || agentDirectory.hasPrefix($0 + "/") }) {
            found.append("the agent's folder \(agentDirectory) is under \(agentDirectory.hasPrefix("/var/tmp") ? "/var/tmp" : "/tmp"), which the unit's PrivateTmp=yes hides: the service would not find its settings; keep the agent elsewhere (e.g. /var/lib/agentruntime/\(Self.unitWord(agentName)))")
        }
        if binaries.hasSuffix("/debug") {
            found.append("\(binaries)/agent-control is a debug build; for a service build release (swift build -c release) and pass --binaries with its folder (swift build -c release --show-bin-path)")
        }
        return found
    }

    /// The unit file's text.
    public var text: String {
        let name = isTemplate ? agentName : Self.unitWord(agentName)
        let settings = agentDirectory + "/settings.json"
        let header = isTemplate ? """
        # AgentRuntime agents: `systemctl enable --now agentruntime@NAME` runs the agent in
        # /var/lib/agentruntime/NAME (its settings.json, modules, .agent/) as the agentruntime
        # user. Written by `agent-control unit --template`.
        """ : """
        # AgentRuntime agent \(agentName), written by `agent-control unit` (or create-agent).
        # It runs \(binaries)/agent-control.
        # Install: cp \(fileName) /etc/systemd/system/ && systemctl daemon-reload
        #          && systemctl enable --now \(fileName)
        # The user must exist (useradd --system --home-dir /var/lib/agentruntime agentruntime) and
        # own the agent's folder; build the agent's own modules first (swift build -c release).
        """
        return """
        \(header)

        [Unit]
        Description=AgentRuntime agent \(agentName)
        Documentation=\(isTemplate ? "man:agent-control(1)" : "file://\(agentDirectory)/README.md")
        After=network-online.target
        Wants=network-online.target

        [Service]
        # The supervisor itself writes READY=1 (every process started), RELOADING=1 … READY=1,
        # STOPPING=1, STATUS= lines and WATCHDOG=1 to $NOTIFY_SOCKET; its workers cannot.
        Type=notify
        NotifyAccess=main
        ExecStart=\(binaries)/agent-control console --settings \(settings) --no-build --configuration release --quiet
        ExecReload=/bin/kill -HUP $MAINPID
        WorkingDirectory=\(agentDirectory)
        Restart=on-failure
        RestartSec=5
        # Exit status 2: the settings or a module are invalid; restarting will not fix them.
        RestartPreventExitStatus=2
        TimeoutStartSec=120
        \(watchdogSeconds > 0 ? "WatchdogSec=\(watchdogSeconds)" : "# WatchdogSec= (no watchdog)")
        # SIGTERM to the supervisor alone: it stops each worker gracefully (SIGKILL after the
        # process's stop_timeout) and kills what they left in their cgroup; systemd SIGKILLs
        # whatever is still there only after TimeoutStopSec. (control-group would SIGTERM every
        # worker at once, behind the supervisor's back.)
        KillMode=mixed
        TimeoutStopSec=\(stopTimeoutSeconds)
        # The workers get a cgroup of their own under the service's (agent-<hash>), killed as one.
        Delegate=yes

        User=\(user)
        Group=\(group ?? user)
        # /var/lib/agentruntime/\(name) and /var/log/agentruntime/\(name), owned by the user (for an
        # agent kept there, and for file outputs).
        StateDirectory=agentruntime/\(name)
        LogsDirectory=agentruntime/\(name)
        \(isTemplate ? "# The agent's folder is its StateDirectory: writable." : "ReadWritePaths=\(agentDirectory)")
        ProtectSystem=strict
        ProtectHome=\(isTemplate ? "yes" : "read-only")
        PrivateTmp=yes
        NoNewPrivileges=yes
        RestrictSUIDSGID=yes
        LockPersonality=yes
        # Not ProtectControlGroups= nor ProtectKernelTunables=: they make /sys/fs/cgroup read-only,
        # where the workers' cgroup is made.
        LimitNOFILE=65536

        [Install]
        WantedBy=multi-user.target

        """
    }

    /// A name as unit names allow it: letters, digits, `:`, `_`, `.`, `-`; anything else `-`.
    static func unitWord(_ name: String) -> String {
        let word = String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || ":_.-".unicodeScalars.contains(scalar)) ? Character(scalar) : "-"
        })
        return word.isEmpty ? "agent" : word
    }

    static func isUserName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.count <= 31,
              first == "_" || (first.isASCII && CharacterSet.letters.contains(first)) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }
    }
}
