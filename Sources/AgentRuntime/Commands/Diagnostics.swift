import AgentCore
import AgentLoop
import AgentModuleABI
import AgentVersion
import Foundation
import JSONSchema

/// `diagnostics`: what an operator asks first about a running agent — versions, where its
/// files are, the store's figures, the fork server, the outputs, the task notifications, and the limits it runs
/// under. Read on the supervisor's loop; changes nothing.
enum Diagnostics {
    @LoopActor
    static func answer(for supervisor: Supervisor) -> JSONValue {
        func number(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }
        func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        var system = utsname()
        uname(&system)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let versions: JSONObject = [
            "agent_runtime": .string(AgentVersion.current), "module_abi": number(Int(AGENT_MODULE_ABI_VERSION)),
            "kernel": .string("\(field(system.sysname)) \(field(system.release)) \(field(system.machine))"),
        ]
        let settingsPath = supervisor.settingsHost.commands?.file.path
        var paths: JSONObject = ["settings": optional(settingsPath), "worker": .string(supervisor.configuration.workerPath)]
        if let settingsPath {
            let agentDirectory = (settingsPath as NSString).deletingLastPathComponent
            paths["agent_directory"] = .string(agentDirectory)
            paths["manifest_cache"] = .string(agentDirectory + "/.agent/cache/manifests.json")
        }
        if let control = supervisor.fronts.paths {
            paths["run_directory"] = .string(control.runDirectory)
            paths["socket"] = .string(control.socketPath)
            paths["pidfile"] = .string(control.pidfile)
            paths["log_file"] = .string(control.logFile)
        }
        paths["store"] = optional(supervisor.store?.path)
        paths["cgroup"] = optional(supervisor.containment?.cgroup)

        var files = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        let openFiles = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        var limits: JSONObject = [
            "files": ["soft": number(Int(clamping: files.rlim_cur)), "hard": number(Int(clamping: files.rlim_max)), "open": number(openFiles)],
            "request_bytes": number(ControlClient.maximumRequestBytes),
        ]
        if let control = supervisor.fronts.server {
            limits["control"] = [
                "max_connections": number(control.limits.maximumConnections), "idle_timeout": .number(JSONNumber(control.limits.idleTimeout)),
                "max_request_bytes": number(ControlClient.maximumRequestBytes), "max_answer_bytes": number(control.limits.maximumAnswerBytes),
                "open_connections": number(control.connectionCount),
            ]
        }
        // How the workers are contained: a cgroup of their own, or their recorded process groups.
        limits["containment"] = supervisor.containment?.cgroup != nil ? "cgroup" : "process_groups"
        limits["shared_rings"] = .bool(supervisor.configuration.sharedRings)

        let workers = supervisor.processes.filter(\.hasWorker).count
        let agent: JSONObject = [
            "pid": number(Int(getpid())), "uptime": .number(JSONNumber(EventLoop.now() - supervisor.startedAt)),
            "processes": number(supervisor.processes.count), "disabled": number(supervisor.disabledProcesses.count),
            "workers": number(workers), "stopping": .bool(supervisor.stopping),
        ]
        var answer: JSONObject = [
            "ok": true, "versions": .object(versions), "agent": .object(agent), "paths": .object(paths),
            "store": supervisor.storeStatus, "fork_server": supervisor.forkServers.status,
            "outputs": .array(supervisor.outputs?.statistics.map(\.jsonValue) ?? []), "limits": .object(limits),
        ]
        answer["notifications"] = supervisor.work.notifier?.statistics.jsonValue
        answer["assignment"] = supervisor.work.tasks?.assignmentFigures?.json
        return .object(answer)
    }
}
