import AgentModuleABI
import CAgentModuleKit
import CAgentSystem
import Foundation
import JSONSchema

extension WorkerMain {
    /// `AGENT_ZYGOTES=0`: the fork server forks every worker itself, and each loads its module.
    static let zygotesKey = "AGENT_ZYGOTES"
    /// The argument of a fork request that names the module library its worker runs: the
    /// server hands the request to that library's zygote (see `agent_fork_server_serve`). Not
    /// shown by ps. (fork_server.c reads the same word.)
    package static let moduleFileFlag = "--module-file"
    /// Set beside `LD_BIND_NOW` when the supervisor added it for the server alone
    /// (`AGENT_FORK_SERVER_BIND_NOW=1`): the server removes both before it forks anything.
    package static let bindNowAddedKey = "AGENT_WORKER_BIND_NOW_ADDED"

    /// Removes the `LD_BIND_NOW` the supervisor gave the server alone: the loader read it at
    /// the server's start (every library's symbols are bound, once, in the image each worker
    /// is forked from), and the workers, and what they run, keep the user's environment.
    static func forgetAddedBindNow() {
        guard getenv(bindNowAddedKey) != nil else { return }
        unsetenv("LD_BIND_NOW")
        unsetenv(bindNowAddedKey)
    }

    /// The fork server: a single-threaded loop in C that forks a worker per request; each
    /// worker returns here with its own arguments. Nothing before the loop may start a thread.
    /// `cgroup`: the agent's, which the server kills (and removes) when the supervisor is gone
    /// without saying goodbye (killed), taking the workers' children with it.
    static func serveForks(cgroup: String?) -> Never {
        forgetAddedBindNow()
        warmUp()
        let capacity = 64 << 10
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
        var length = 0
        let zygotes = Int32(EnvironmentSwitch.isOff(getenv(zygotesKey).map { String(cString: $0) }) ? FORK_SERVE_PLAIN : FORK_SERVE_ROUTING)
        var served = agent_fork_server_serve(channelFD, buffer, capacity, &length, WorkerMemory.forkServerReleaseDelay, zygotes)
        var module: LoadedModule?
        if served == 1 {
            // A module's zygote: it loads the module once, then forks that module's workers.
            module = becomeZygote(request(UnsafeRawBufferPointer(start: buffer, count: length)).arguments)
            served = agent_fork_server_serve(channelFD, buffer, capacity, &length, WorkerMemory.forkServerReleaseDelay, Int32(FORK_SERVE_AS_ZYGOTE))
            // The server is gone or quit: its zygote has nothing to clean up.
            if served != 0 { exit(ExitCode.success) }
        }
        guard served == 0 else {
            if served == -1, let cgroup {
                let agentCgroup = WorkerCgroup.agentCgroup(ofWorkers: cgroup)
                // Its runs' limits in v1 hierarchies: nothing else would remove them unless the
                // agent starts again from the same run folder. That start waits for this process
                // to end first (the run folder's record names it); should it not have (no record),
                // nothing is removed once it has made the agent's cgroup again, which comes
                // before its v1 folders.
                if WorkerCgroup.killAndRemove(agentCgroup, timeout: 2), access(agentCgroup, F_OK) != 0,
                   let folders = getenv(WorkerCgroup.v1FoldersKey) {
                    WorkerCgroup.removeV1Folders(String(cString: folders))
                }
            }
            exit(ExitCode.success)
        }
        let (arguments, commandLine) = request(UnsafeRawBufferPointer(start: buffer, count: length))
        buffer.deallocate()
        showCommandLine(commandLine)
        runWorker(arguments: arguments, forked: true, loaded: module)
    }

    /// In a new zygote (fd 3: its socket to the fork server): loads the module the request
    /// names and says whether it can fork workers from it; exits when it cannot. A module whose
    /// load leaves a thread (it would be missing in every worker), an open descriptor (each
    /// worker closes them), a child, another session or process group or the subreaper flag, or
    /// that declines (`agent_module_no_zygote`), is loaded by each of its workers instead, as is
    /// one that fails to load (each worker then reports why). The module's warm-up
    /// (`agent_module_warm_up`) runs before the check, so that what it leaves is checked too,
    /// and must leave the process's own state (working folder, umask, signal dispositions,
    /// limits, environment, fds 0-3) as it found it: only the zygote's workers would inherit it.
    private static func becomeZygote(_ arguments: [String]) -> LoadedModule {
        guard let file = value(of: moduleFileFlag, in: arguments) else {
            _ = agent_zygote_loaded(channelFD, Int32(ZYGOTE_UNCHECKED))
            exit(ExitCode.success)
        }
        let module = value(of: "--module", in: arguments) ?? file
        showCommandLine(Array("agent-worker\0--zygote\0\(module)".utf8))
        let (session, group) = (getsid(0), getpgid(0))
        let loaded = try? ModuleLoader.load(path: file, module: module, deferManifest: true)
        if let loaded { warmUpWorkerStart(loaded) }
        var verdict = loaded == nil ? Int32(ZYGOTE_UNCHECKED) : agent_zygote_warm_up(file)
        if verdict == 0 { verdict = agent_zygote_forkable(file, session, group) }
        _ = agent_zygote_loaded(channelFD, verdict)
        guard let loaded, verdict == 0 else { exit(ExitCode.success) }
        // Read again after the module's load (which forgot it): for every worker of this zygote.
        agent_module_kit_note_main_stack()
        return loaded
    }

    /// Runs, in a zygote before the check of what its load left, the parts of a forked
    /// worker's start that make the Swift runtime look a type up by its mangled name, start no
    /// thread and change nothing its workers would see: each worker finds them made (with the
    /// SDK's warm-up, 13 lookups a worker made itself before stop 75, 0.08 ms of its start).
    private static func warmUpWorkerStart(_ loaded: LoadedModule) {
        // Foundation's once for every thread's `Thread` object. The main thread's, made here,
        // holds nothing a worker's differs in (the same pthread_t; its name is read each time).
        _ = Thread.current
        // The copy of the zygote's module into each worker's start.
        _ = copied(loaded)
        // The list of descriptors a frame brought (none: no socket, EBADF).
        _ = WorkerChannel(fd: -1).readOneFrame()
        // The SIGTERM source's slot, assigned once the worker is ready.
        warmUpStopSignalSlot()
    }

    /// `module`, copied as a worker's start copies it (an outlined copy of the optional, which
    /// looks its type up); not optimized, so that the copy stays.
    @_optimize(none) @inline(never) private static func copied(_ module: LoadedModule?) -> LoadedModule? {
        var copy = module
        if copy?.file.isEmpty == true { copy = nil }
        return copy
    }

    /// ps shows what the process is (the server was started with room for it).
    private static func showCommandLine(_ commandLine: [UInt8]) {
        commandLine.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                _ = agent_set_command_line(CommandLine.unsafeArgv, CommandLine.argc, $0.baseAddress, $0.count)
            }
        }
    }

    /// A fork request's payload (arguments separated by NULs): the worker's arguments, and its
    /// command line as /proc shows it.
    private static func request(_ payload: UnsafeRawBufferPointer) -> (arguments: [String], commandLine: [UInt8]) {
        let arguments = ["agent-worker"] + payload.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        // What the server's routing reads (the library and module name) ps does not show.
        let shown = arguments.firstIndex(of: moduleFileFlag).map { arguments[..<$0] } ?? arguments[...]
        return (arguments, Array(shown.joined(separator: "\0").utf8))
    }

    /// Runs, once in the fork server, the thread-free parts of a worker's start on sample
    /// input: the type metadata, protocol conformances and caches they build then belong to the
    /// server, and every forked worker inherits them instead of building its own (type lookups
    /// by mangled name were a fifth of a forked worker's start).
    private static func warmUp() {
        let sample = #"{"module": "/warm/libwarm.so", "module_name": "warm", "type": "warm", "name": "warm", "settings": {"list": [1, 2.5, "text", true, null], "object": {"key": "value"}, "big": 12345678901234567890}, "watchdog_ms": 0, "adapter_libraries": {"warm": "/warm/libwarm.so"}}"#
        if let start = try? JSONValue.parse(Array(sample.utf8)) {
            _ = start["module"]?.stringValue
            _ = start["watchdog_ms"]?.numberValue?.intValue
            _ = (start["settings"] ?? .object([:])).serialized()
            for (_, value) in start["adapter_libraries"]?.objectValue ?? [:] { _ = value.stringValue }
        }
        let frames = FrameBuffer()
        FrameCodec.append(.ready, body: EmptyCollection(), to: frames)
        FrameCodec.append(.failure, body: Array(#"{"code": "warm", "message": "warm"}"#.utf8), to: frames)
        var decoder = FrameDecoder()
        _ = try? decoder.feed(frames.bytes)
        _ = Array("--process\0warm".utf8).withUnsafeBytes(request)
        try? ModuleLoader.checkFile(path: "/proc/self/exe", module: "warm")
        // A worker decodes its module's partial manifest (the kinds it runs): the first use of
        // the manifest's checks instantiated their types by mangled name in every worker.
        _ = try? ModuleManifest(json: #"{"name": "warm", "version": "1", "partial": true, "processes": [{"type": "warm", "kind": "datasource"}]}"#,
                                module: "warm", file: "/warm/libwarm.so", partialAllowed: true)
        _ = WorkerHost(channel: WorkerChannel(fd: -1)).api
        // Where the main thread's stack starts, for every forked worker's trim of it (see
        // `agent_module_kit_trim_stack`): read once here, not from /proc in every worker.
        agent_module_kit_note_main_stack()
    }

}
