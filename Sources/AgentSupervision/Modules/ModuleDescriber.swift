import AgentBase
import AgentCore
import AgentLoop
import CAgentSystem
import Foundation
import JSONSchema

/// Learns modules' manifests without loading them into the supervisor: a short-lived worker
/// per module loads the library and sends the manifest back. Answers are cached by the
/// library's identity (path, size, modification time).
public final class ModuleDescriber {
    public let workerPath: String
    public var timeout: Double = 30
    /// A SIGINT or SIGTERM caught while describing kills the describe workers and ends the
    /// describing (``interruption``).
    public var stopSignals: StopSignals?
    /// Variables describe workers do not get (the agent's secrets, ``SecretVariables``).
    public var withheld: Set<String> = SecretVariables.conventional
    /// The agent's workers' cgroup folder, open, which describe workers start in (-1: the
    /// caller's): what a library's constructors leave running is then the agent's to kill.
    public var cgroup: Int32 = -1
    /// The signal that ended the describing, and the module being described then.
    public private(set) var interruption: (signal: Int32, module: String)?
    private var cache: [String: (identity: String, manifest: ModuleManifest)] = [:]
    /// Where manifests are remembered between runs (nil: only in memory).
    public let cacheFile: String?
    private var cachedText: [String: (identity: String, json: String)] = [:]

    /// - Parameter cacheFile: a JSON file remembering manifests by library identity, so that a
    ///   later launch skips the describe worker for libraries that did not change.
    public init(workerPath: String, cacheFile: String? = nil) {
        self.workerPath = workerPath
        self.cacheFile = cacheFile
        loadCacheFile()
    }

    /// What was wrong with the cache file: entries that were ignored (their modules are
    /// described afresh). The cache is untrusted input like the manifests it holds.
    public private(set) var cacheWarnings: [String] = []

    private func loadCacheFile() {
        guard let cacheFile, let data = FileManager.default.contents(atPath: cacheFile) else { return }
        let entries: JSONObject
        do {
            guard let object = try JSONValue.parse(data).objectValue else {
                cacheWarnings.append("\(cacheFile): ignored: expected a JSON object, found something else; modules are described afresh")
                return
            }
            entries = object
        } catch {
            cacheWarnings.append("\(cacheFile): ignored: not valid JSON (\(error)); modules are described afresh")
            return
        }
        for (library, entry) in entries {
            let pointer = JSONPointer.escape(library)
            guard let identity = entry["identity"]?.stringValue, let json = entry["manifest"]?.stringValue,
                  let module = entry["module"]?.stringValue else {
                cacheWarnings.append("\(cacheFile): /\(pointer): ignored: expected an object with the strings \"identity\", \"manifest\" and \"module\"; the module is described afresh")
                continue
            }
            do throws(ModuleLoadError) {
                let manifest = try ModuleManifest(json: json, module: module, file: library)
                guard manifest.name == module else {
                    throw ModuleLoadError(.nameMismatch, module: module, file: library, "the cached manifest calls the module \"\(manifest.name)\"")
                }
                cache[library] = (identity, manifest)
                cachedText[library] = (identity, json)
            } catch {
                cacheWarnings.append("\(cacheFile): /\(pointer)/manifest: ignored: \(error.message); the module \(module) is described afresh")
            }
        }
    }

    private func saveCacheFile() {
        guard let cacheFile else { return }
        let object = JSONObject(cachedText.sorted { $0.key < $1.key }.map { library, entry in
            (library, JSONValue.object(["identity": .string(entry.identity), "manifest": .string(entry.json),
                                        "module": .string(cache[library]?.manifest.name ?? "")]))
        })
        _ = try? PrivateFiles.makeDirectories(URL(fileURLWithPath: cacheFile).deletingLastPathComponent().path)
        // Written whole and renamed (a reader never sees half a file), 0600 whatever the umask.
        try? PrivateFiles.write(JSONValue.object(object).serializedBytes(), atomicallyTo: cacheFile)
    }

    /// Describes every module at once (one worker each, in parallel). The error lists every
    /// module that failed.
    public func describe(_ locations: [ModuleLocation]) throws -> [String: ModuleManifest] {
        let (manifests, errors) = describeAll(locations)
        if !errors.isEmpty { throw ModuleErrors(errors) }
        return manifests
    }

    /// Describes every module it can; returns the manifests and the failures.
    public func describeAll(_ locations: [ModuleLocation]) -> (manifests: [String: ModuleManifest], errors: [ModuleLoadError]) {
        var results: [String: ModuleManifest] = [:]
        var errors: [ModuleLoadError] = []
        var pending: [Describing] = []
        for location in locations {
            // A jsonl/1 module's manifest was read as data when it was located: no worker.
            if let manifest = location.programManifest {
                results[location.name] = manifest
                continue
            }
            let identity = Self.identity(location.library)
            if let cached = cache[location.library], cached.identity == identity {
                results[location.name] = cached.manifest
                continue
            }
            switch startDescribing(location, identity: identity) {
            case .success(let item): pending.append(item)
            case .failure(let error): errors.append(error)
            }
        }
        let deadline = EventLoop.now() + timeout
        for item in pending {
            switch hear(item, deadline: deadline) {
            case .success(let manifest)?: results[item.location.name] = manifest
            case .failure(let error)?: errors.append(error)
            case nil: break
            }
        }
        if !pending.isEmpty { saveCacheFile() }
        return (results, errors)
    }

    /// A describe worker started and not heard yet.
    private struct Describing {
        var location: ModuleLocation
        var identity: String
        var fd: Int32
        var pid: pid_t
    }

    /// Checks the library's file and starts a describe worker for it.
    private func startDescribing(_ location: ModuleLocation, identity: String) -> Result<Describing, ModuleLoadError> {
        do {
            try ModuleLoader.checkFile(path: location.library, module: location.name)
        } catch {
            return .failure(error)
        }
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            return .failure(ModuleLoadError(.workerFailed, module: location.name, file: location.library, "socketpair failed: \(String(cString: strerror(errno)))"))
        }
        var environment = SecretVariables.withholding(withheld, from: ProcessInfo.processInfo.environment)
        environment["AGENT_SUPERVISOR_PID"] = String(getpid())
        environment["SWIFT_BACKTRACE"] = environment["SWIFT_BACKTRACE"] ?? "enable=no"
        let spawned = DescribeWorkers.spawning {
            ProcessSpawner.spawn(
                path: workerPath, arguments: ["agent-worker", "--describe", location.library, "--module", location.name],
                environment: environment, stdout: 2, stderr: 2, channel: fds[1], newGroup: true, cgroup: cgroup)
        }
        close(fds[1])
        switch spawned {
        case .success(let pid):
            return .success(Describing(location: location, identity: identity, fd: fds[0], pid: pid))
        case .failure(let error):
            close(fds[0])
            return .failure(ModuleLoadError(.workerFailed, module: location.name, file: location.library, "\(error)"))
        }
    }

    /// Reads the worker's answer (until `deadline`) and reaps it; nil when a stop signal
    /// interrupted the describing (then the workers not asked yet are killed unheard).
    private func hear(_ item: Describing, deadline: Double) -> Result<ModuleManifest, ModuleLoadError>? {
        if interruption != nil {
            close(item.fd)
            kill(-item.pid, SIGKILL)
            _ = reap(item.pid)
            return nil
        }
        let outcome = readAnswer(fd: item.fd, deadline: deadline)
        close(item.fd)
        // Its group goes with it, answered or not: a process a library's constructors started
        // must not outlive the describing (the group is the worker's pid, not reused before
        // the reap below).
        kill(-item.pid, SIGKILL)
        let status = reap(item.pid)
        switch outcome {
        case .manifest(let json)?:
            return manifest(json, of: item)
        case .failure(let code, let message)?:
            return .failure(ModuleLoadError(ModuleLoadError.Code(rawValue: code), module: item.location.name, file: item.location.library, message))
        case .interrupted(let signal)?:
            interruption = (signal, item.location.name)
            return nil
        case nil:
            let how = ProcessSpawner.exitCode(status).map { "exited with status \($0)" }
                ?? "was killed by signal \(ProcessSpawner.termSignal(status)) (\(SignalName.of(ProcessSpawner.termSignal(status))))"
            return .failure(ModuleLoadError(.workerFailed, module: item.location.name, file: item.location.library,
                                            "the worker loading the module \(how) before describing it; the library's initialisers may crash or hang"))
        }
    }

    /// Waits for a describe worker; returns its wait status.
    private func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        DescribeWorkers.reaped(pid)
        return status
    }

    /// The manifest a worker described, checked and cached.
    private func manifest(_ json: String, of item: Describing) -> Result<ModuleManifest, ModuleLoadError> {
        do throws(ModuleLoadError) {
            let manifest = try ModuleManifest(json: json, module: item.location.name, file: item.location.library)
            if manifest.name != item.location.name {
                throw ModuleLoadError(.nameMismatch, module: item.location.name, file: item.location.library,
                                      "the library calls itself \"\(manifest.name)\", but it was enabled as \"\(item.location.name)\"; enable it under its own name or fix the name passed to exportModule")
            }
            cache[item.location.library] = (item.identity, manifest)
            cachedText[item.location.library] = (item.identity, json)
            return .success(manifest)
        } catch {
            return .failure(error)
        }
    }

    private enum Answer { case manifest(String), failure(String, String), interrupted(Int32) }

    private func readAnswer(fd: Int32, deadline: Double) -> Answer? {
        var decoder = FrameDecoder()
        var answer: Answer?
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while answer == nil {
            if let stopSignals, stopSignals.check() { return .interrupted(stopSignals.received ?? SIGTERM) }
            let remaining = deadline - EventLoop.now()
            guard remaining > 0 else { return nil }
            let signalFD = stopSignals?.fd ?? -1
            var pollers = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&pollers, signalFD >= 0 ? 2 : 1, Saturating.pollTimeout(min(remaining, 3600)))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            if pollers[0].revents == 0 { continue }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return answer }
            try? buffer.withUnsafeBytes { raw in
                try decoder.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { kind, body in
                    switch kind {
                    case .manifest: answer = .manifest(String(decoding: body, as: UTF8.self))
                    case .failure:
                        let object = (try? JSONValue.parse(body))?.objectValue
                        answer = .failure(object?["code"]?.stringValue ?? "worker_failed",
                                          object?["message"]?.stringValue ?? String(decoding: body, as: UTF8.self))
                    default: break
                    }
                }
            }
        }
        return answer
    }

    /// Size, modification and change times, inode: a rebuilt library is described again (the
    /// change time too, which a copy in place that keeps the size and the mtime still moves).
    package static func identity(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "" }
        return "\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec):\(info.st_ino)"
    }
}
