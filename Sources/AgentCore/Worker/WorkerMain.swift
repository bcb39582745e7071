import AgentModuleABI
import AgentVersion
import CAgentModuleKit
import CAgentSystem
import Foundation
import JSONSchema

/// The program a worker runs (`agent-worker`): loads one module and either describes it or
/// runs one process of it, talking to the supervisor over fd 3.
public enum WorkerMain {
    /// Exit codes the supervisor interprets.
    public enum ExitCode {
        /// The process ended normally (or after a stop request).
        public static let success: Int32 = 0
        /// The process failed while running; restart may help.
        public static let failure: Int32 = 1
        /// The module could not be loaded; restart will not help until it is rebuilt.
        public static let moduleUnusable: Int32 = 70
        /// The settings were refused; restart will not help until they are fixed.
        public static let badSettings: Int32 = 78
    }

    /// The channel to the supervisor is always fd 3.
    static let channelFD: Int32 = 3

    public static func main(arguments: [String]) -> Never {
        if arguments.contains("--help") || arguments.contains("-h") {
            print("""
            USAGE: agent-worker --describe <library> --module <name>
                   agent-worker --process <name>
                   agent-worker --spare <library> --module <name>
                   agent-worker --fork-server
                   agent-worker --version

            Started by the AgentRuntime supervisor (agent-control), never by hand: it expects the
            supervisor's socket on fd 3. With --describe it loads the module library and sends its
            manifest; with --process it receives a start frame, loads the module and runs that
            process until asked to stop; with --spare it loads the module first, then waits for
            the start frame (a warm spare that replaces a crashed worker at once). With
            --fork-server it forks workers on the supervisor's request (their arguments and fds
            come over fd 3), so that they skip exec and dynamic linking; a module's workers come
            from that module's zygote (ps: agent-worker --zygote NAME), a child of the server that
            loaded the module once (AGENT_ZYGOTES=0: each worker loads it).
            """)
            exit(0)
        }
        if arguments.dropFirst().first == "--version" {
            print(AgentVersion.line(for: "agent-worker"))
            exit(0)
        }
        // Before any thread starts: an arena made before the limit is kept.
        WorkerMemory.limitArenas()
        // Into the agent's cgroup before anything else, so that no module code runs outside it.
        var cgroup = getenv(WorkerCgroup.environmentKey).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        if let path = cgroup, case let code = WorkerCgroup.join(path), code != 0 {
            FileHandle.standardError.write(Data("agent-worker: cannot join the agent's cgroup \(path): \(String(cString: strerror(code)))\n".utf8))
            cgroup = nil
        }
        if arguments.contains("--fork-server") {
            // In the agent's cgroup the server outlives the supervisor just long enough to kill
            // the cgroup (at the end of file on its socket); elsewhere it dies with it.
            guardAgainstOrphanhood(deathSignal: cgroup == nil)
            serveForks(cgroup: cgroup)
        }
        guardAgainstOrphanhood()
        runWorker(arguments: arguments, forked: false)
    }

    /// A worker's life. `forked`: made by the fork server, whose middle process has exited, so
    /// the supervisor became the parent only after the fork; the parent-death signal is set
    /// once the start frame shows that the supervisor has the worker's pid (until then an end
    /// of file on the channel says the supervisor is gone). `loaded`: the module its zygote
    /// loaded before forking it.
    static func runWorker(arguments: [String], forked: Bool, loaded: LoadedModule? = nil) -> Never {
        signal(SIGPIPE, SIG_IGN)
        // The module's children start with default signals, not the worker's (see child_signals.c).
        _ = agent_clean_child_signals()
        let channel = WorkerChannel(fd: channelFD)
        if let index = arguments.firstIndex(of: "--describe"), index + 1 < arguments.count {
            let path = arguments[index + 1]
            let module = value(of: "--module", in: arguments) ?? URL(fileURLWithPath: path).lastPathComponent
            describe(path: path, module: module, channel: channel)
        }
        // A warm spare: load the module now, then wait for a start frame naming it.
        var spare = false
        var preloaded = loaded
        if let index = arguments.firstIndex(of: "--spare"), index + 1 < arguments.count, !ModuleManifest.isProgramManifest(arguments[index + 1]) {
            let path = arguments[index + 1]
            if preloaded?.file != path {
                preloaded = try? ModuleLoader.load(path: path, module: value(of: "--module", in: arguments) ?? path, deferManifest: true)
            }
            spare = preloaded != nil
        }
        runProcess(channel: channel, preloaded: preloaded, spare: spare, forked: forked)
    }

    static func value(of flag: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// Dies with the supervisor: PR_SET_PDEATHSIG, then a check that the parent did not
    /// already die before the call (the race the man page warns about).
    private static func guardAgainstOrphanhood(deathSignal: Bool = true) {
        if deathSignal { _ = agent_set_parent_death_signal(SIGKILL) }
        // getenv, not ProcessInfo's environment: that builds a dictionary of the whole
        // environment, a twelfth of a forked worker's start.
        if let expected = getenv("AGENT_SUPERVISOR_PID").map({ String(cString: $0) }), let pid = Int32(expected),
           getppid() != pid {
            exit(ExitCode.failure)
        }
    }

    static func fail(_ channel: WorkerChannel, code: String, _ message: String, exitCode: Int32) -> Never {
        let body = JSONValue.object(["code": .string(code), "message": .string(message)]).serialized()
        channel.send(.failure, body: Array(body.utf8))
        channel.startWriter()
        channel.flush()
        exit(exitCode)
    }

    private static func describe(path: String, module: String, channel: WorkerChannel) -> Never {
        do {
            let loaded = try ModuleLoader.load(path: path, module: module)
            channel.send(.manifest, body: Array(loaded.manifestJSON.utf8))
            channel.startWriter()
            channel.flush()
            exit(ExitCode.success)
        } catch {
            fail(channel, code: error.code.rawValue, error.message, exitCode: ExitCode.moduleUnusable)
        }
    }

    /// `preloaded`: the module, loaded by the zygote or by the worker as a spare; `spare`: the
    /// worker waits as a warm spare.
    private static func runProcess(channel: WorkerChannel, preloaded: LoadedModule?, spare: Bool, forked: Bool) -> Never {
        var first = channel.readOneFrame()
        if forked { guardAgainstOrphanhood() }
        var ring: RingReceiver?
        var prepared: PreparedHost?
        if let (kind, body) = first, kind == .ring {
            ring = attachRing(channel, body)
            if spare {
                // A warm spare (its rings come when it is made): what does not depend on the
                // start frame is done while it waits, so that adopted it says ready at once.
                prepared = prepareHost(channel: channel, ring: ring)
                startExitReaper()
                // A spare may wait for hours, the only process mapping what its start touched.
                WorkerMemory.releaseStartPagesLater()
                first = awaitStartFrame(channel)
            } else {
                first = channel.readOneFrame()
            }
        }
        guard let (kind, body) = first, kind == .start,
              let start = try? JSONValue.parse(body),
              let modulePath = start["module"]?.stringValue,
              let moduleName = start["module_name"]?.stringValue,
              let type = start["type"]?.stringValue,
              let name = start["name"]?.stringValue
        else {
            fail(channel, code: "protocol", "expected a start frame from the supervisor", exitCode: ExitCode.failure)
        }
        if ModuleManifest.isProgramManifest(modulePath) {
            runProgram(channel: channel, start: start, ring: ring, prepared: prepared, manifestFile: modulePath, module: moduleName, type: type, name: name)
        }
        let settings = (start["settings"] ?? .object([:])).serialized()
        if modulePath == "builtin:chat" {
            runChatbot(channel: channel, start: start, ring: ring, prepared: prepared)
        }

        let loaded: LoadedModule
        do {
            if let preloaded, preloaded.file == modulePath {
                loaded = preloaded
            } else {
                // The supervisor read the whole manifest (a describe): the worker needs the
                // kinds alone, and a module need not build every type's schema in it.
                loaded = try ModuleLoader.load(path: modulePath, module: moduleName, deferManifest: true)
            }
        } catch {
            // Named with the module and its file: the process's reason says which library failed.
            fail(channel, code: error.code.rawValue, error.description, exitCode: ExitCode.moduleUnusable)
        }

        if start["task"]?.boolValue == true {
            runTaskExecutor(channel: channel, start: start, loaded: loaded, type: type, settings: settings, ring: ring, prepared: prepared)
        }

        let made = startHost(channel: channel, start: start, ring: ring, prepared: prepared)
        let host = made.host
        sayReady(channel, then: made)

        // The process runs on its own thread so that the main thread stays free for the main
        // actor and the main dispatch queue, which module code may use.
        WorkerThread.start("agent-process", stackSize: 8 << 20) {
            var api = host.api
            var errorBuffer = [CChar](repeating: 0, count: 4096)
            let status = type.withCString { typePointer in
                name.withCString { namePointer in
                    settings.withCString { settingsPointer in
                        loaded.runProcess!(typePointer, namePointer, settingsPointer, strlen(settingsPointer),
                                           &api, &errorBuffer, errorBuffer.count)
                    }
                }
            }
            // The module's notifier argument is valid only until run_process returned.
            host.setEventNotifier(nil, nil)
            let reason = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            switch Int(status) {
            case Int(AGENT_OK):
                channel.flush()
                exit(ExitCode.success)
            case Int(AGENT_BAD_SETTINGS):
                fail(channel, code: "bad_settings", reason, exitCode: ExitCode.badSettings)
            case Int(AGENT_UNKNOWN_TYPE):
                fail(channel, code: "unknown_type", reason, exitCode: ExitCode.badSettings)
            default:
                fail(channel, code: "process_failed", reason.isEmpty ? "run_process returned \(status)" : reason, exitCode: ExitCode.failure)
            }
        }
        // After the process's start: a SIGTERM meanwhile waits in the pipe.
        watchStopSignal(host)
        serveMainQueue()
    }

    /// The main thread's last step: the stack pages its start went through given back (it
    /// waits near the top from now on; see `agent_module_kit_trim_stack`), then the main
    /// queue, which module code may use, for good.
    private static func serveMainQueue() -> Never {
        _ = agent_module_kit_trim_stack()
        dispatchMain()
    }

    /// A task executor: makes the module's handler for `type` from the task's settings, then
    /// takes runs as they come (``TaskExecutor``) until the supervisor asks it to stop (an idle
    /// executor, or the agent stopping); runs still going then are abandoned (the supervisor
    /// already counts them interrupted).
    private static func runTaskExecutor(channel: WorkerChannel, start: JSONValue, loaded: LoadedModule, type: String,
                                        settings: String, ring: RingReceiver?, prepared: PreparedHost?) -> Never {
        guard let entries = loaded.taskEntries else {
            fail(channel, code: "unknown_type", "module \"\(loaded.module)\" (\(loaded.file)) has no task handlers; \"\(type)\" is not a task type of it", exitCode: ExitCode.badSettings)
        }
        guard loaded.manifest.processType(type)?.kind == "task" else {
            let known = loaded.manifest.processes.filter { $0.kind == "task" }.map { "\"\($0.type)\"" }.joined(separator: ", ")
            fail(channel, code: "unknown_type", "module \"\(loaded.module)\" has no task type \"\(type)\" (it has \(known.isEmpty ? "none" : known))", exitCode: ExitCode.badSettings)
        }
        var executor: TaskExecutor?
        let started = startHost(channel: channel, start: start, ring: ring, prepared: prepared) { host in
            var errorBuffer = [CChar](repeating: 0, count: 4096)
            let handler = type.withCString { typePointer in
                settings.withCString { entries.create(typePointer, $0, strlen($0), host.apiPointer, &errorBuffer, errorBuffer.count) }
            }
            guard let handler else {
                let reason = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                fail(channel, code: "bad_settings", reason.isEmpty ? "task_create returned NULL for \"\(type)\"" : reason, exitCode: ExitCode.badSettings)
            }
            let made = TaskExecutor(host: host, handler: handler, entries: entries)
            host.taskFrames = { made.handle($0, $1) }
            executor = made
        }
        _ = executor
        let host = started.host
        host.onStop = {
            channel.flush()
            exit(ExitCode.success)
        }
        sayReady(channel, then: started)
        watchStopSignal(host)
        serveMainQueue()
    }

    /// The runtime's own chatbot process: no module library, the adapters' modules are loaded
    /// here.
    private static func runChatbot(channel: WorkerChannel, start: JSONValue, ring: RingReceiver?, prepared: PreparedHost?) -> Never {
        let made = startHost(channel: channel, start: start, ring: ring, prepared: prepared)
        // At once: a module adapter made below may ask the host (its state, a query), whose
        // answers come through the reader.
        made.releaseReader()
        let host = made.host
        let chatbot = ChatbotProcess(host: host)
        var libraries: [String: String] = [:]
        for (name, path) in start["adapter_libraries"]?.objectValue ?? [:] { libraries[name] = path.stringValue }
        do {
            try chatbot.configure(settings: start["settings"]?.objectValue ?? [:], libraries: libraries)
        } catch {
            fail(channel, code: "bad_settings", "\(error)", exitCode: ExitCode.badSettings)
        }
        sayReady(channel)
        watchStopSignal(host)
        chatbot.run()
        channel.flush()
        exit(ExitCode.success)
    }

    /// The host side of the ABI on the channel: writer and reader threads, stop on SIGTERM.
    /// `prepared`: a warm spare's, made while it waited (``prepareHost(channel:ring:)``).
    /// `prepare`: runs before the reader reads (a task executor makes its handler there, so that
    /// no run frame finds it missing). The reader stays parked: the caller lets it go, most once
    /// the ready frame is sent (``sayReady(_:then:)``), so that no frame is handled — no run
    /// started, no crash of it seen — before the supervisor knows the worker is ready.
    static func startHost(channel: WorkerChannel, start: JSONValue, ring: RingReceiver?, prepared: PreparedHost? = nil,
                          prepare: (WorkerHost) -> Void = { _ in }) -> PreparedHost {
        let made = prepared ?? prepareHost(channel: channel, ring: ring)
        made.host.setWatchdog(milliseconds: Int64(start["watchdog_ms"]?.numberValue?.intValue ?? 0))
        prepare(made.host)
        return made
    }

    /// The host and its threads (the reader parked), the exit flush and the SIGTERM handler:
    /// all that needs no start frame.
    static func prepareHost(channel: WorkerChannel, ring: RingReceiver?) -> PreparedHost {
        let prepared = PreparedHost(channel: channel, ring: ring)
        // A module that calls exit() still gets out what it emitted before.
        exitingChannel = channel
        atexit { WorkerMain.exitingChannel?.flush() }
        catchStopSignal()
        return prepared
    }

    /// A warm spare's wait for its start frame. Its SIGTERM handler is already installed: a
    /// SIGTERM meanwhile ends it as the default action did before (nothing of a process runs
    /// yet to stop gracefully).
    private static func awaitStartFrame(_ channel: WorkerChannel) -> (FrameKind, [UInt8])? {
        if stopSignalPipe >= 0 {
            var watched = [pollfd(fd: channel.fd, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopSignalPipe, events: Int16(POLLIN), revents: 0)]
            while poll(&watched, 2, -1) < 0, errno == EINTR {}
            if watched[1].revents & Int16(POLLIN) != 0 {
                signal(SIGTERM, SIG_DFL)
                raise(SIGTERM)
                exit(ExitCode.failure)
            }
        }
        return channel.readOneFrame()
    }

    /// Maps the rings of a `ring` frame: the delivery ring (its memfd and the eventfd for
    /// signals came with it) and, when a third fd came, the emit ring, which the channel then
    /// writes to. A ring that cannot be mapped ends the worker: the supervisor would publish
    /// into it, or wait for frames in it.
    private static func attachRing(_ channel: WorkerChannel, _ body: [UInt8]) -> RingReceiver {
        let fds = channel.receivedFDs
        channel.receivedFDs = []
        guard (body.count == 8 && fds.count == 2) || (body.count == 16 && fds.count == 4) else {
            fds.forEach { close($0) }
            fail(channel, code: "protocol", "a ring frame needs one capacity and two fds, or two and four (got \(body.count) bytes, \(fds.count) fds)", exitCode: ExitCode.failure)
        }
        func capacity(at offset: Int) -> Int {
            body.withUnsafeBytes { Int(clamping: UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self))) }
        }
        defer {
            close(fds[0])
            if fds.count == 4 { close(fds[2]) }
        }
        do {
            let receiver = RingReceiver(ring: try SharedRing(mapping: fds[0], capacity: capacity(at: 0)), roomSignal: fds[1])
            if fds.count == 4 {
                channel.attachEmitRing(try SharedRing(mapping: fds[2], capacity: capacity(at: 8)), signal: fds[1], room: fds[3])
            }
            return receiver
        } catch {
            fail(channel, code: "resources", "cannot map the worker's rings: \(error)", exitCode: ExitCode.failure)
        }
    }

    /// SIGTERM asks the process to stop gracefully, like a stop frame. Caught by a handler that
    /// writes to a pipe, read by a dispatch source (``watchStopSignal(_:)``): not ignored (an
    /// ignored signal stays ignored in the children a module execs) and not blocked (a dispatch
    /// signal source blocks it in the thread that registers it, and threads inherit their
    /// creator's mask).
    private static func catchStopSignal() {
        let signals: [Int32] = [SIGTERM]
        stopSignalPipe = signals.withUnsafeBufferPointer { agent_signal_pipe($0.baseAddress, Int32($0.count)) }
        if stopSignalPipe < 0 {
            FileHandle.standardError.write(Data("agent-worker: cannot catch SIGTERM: \(String(cString: strerror(errno)))\n".utf8))
        }
    }

    /// Turns a caught SIGTERM into a stop request: after the ready frame, off the start's
    /// critical path (a SIGTERM before waits in the pipe). A read source on the pipe, watched
    /// by dispatch's event thread, which a worker runs anyway as soon as anything in it sleeps
    /// or waits on a timer: no thread of its own (a thread's touched stack and its malloc
    /// arena were a tenth of an idle worker's private memory). Its handler runs on a serial
    /// queue of its own, so that a module's stop handler that blocks holds no shared pool.
    static func watchStopSignal(_ host: WorkerHost) {
        let pipe = stopSignalPipe
        guard pipe >= 0 else { return }
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe, queue: DispatchQueue(label: "agent-signals"))
        source.setEventHandler {
            var byte: UInt8 = 0
            // The pipe is non-blocking: read what the handler wrote, then wait again.
            while read(pipe, &byte, 1) == 1 { host.requestStop() }
        }
        source.resume()
        stopSignalSource = source
    }

    /// Sends the ready frame, the exit reaper started first: its body is the reaper's pid (see
    /// ``readyFrameBody``); then lets `host`'s reader go, if it still waits. The frame wakes the supervisor on this core (a socket's wake-up
    /// expects the writer to sleep next), where this thread would go on starting the worker's
    /// threads while the supervisor waits behind it, the other core idle: the core is offered
    /// to it at once.
    static func sayReady(_ channel: WorkerChannel, then host: PreparedHost? = nil) {
        startExitReaper()
        channel.send(.ready, body: readyFrameBody)
        host?.releaseReader()
        WorkerMemory.releaseStartPagesLater()
        sched_yield()
    }

    /// The worker's exit reaper (0: none).
    nonisolated(unsafe) private(set) static var exitReaper: pid_t = 0

    /// The ready frame's body: the exit reaper's pid, 4 bytes little-endian, for the supervisor
    /// to end it quietly once the worker is dead; empty without a reaper.
    static var readyFrameBody: [UInt8] {
        exitReaper > 0 ? withUnsafeBytes(of: exitReaper.littleEndian, Array.init) : []
    }

    /// Starts the worker's exit reaper (`agent_start_exit_reaper`), so that a crash or a kill is
    /// reported without waiting for the kernel to free the worker's memory: on the main thread,
    /// just before the worker says ready. A clone that shares the address space copies no page
    /// table: some µs. `AGENT_WORKER_EXIT_REAPER=0` goes without.
    static func startExitReaper() {
        if let value = getenv("AGENT_WORKER_EXIT_REAPER"), String(cString: value) == "0" { return }
        let pid = agent_start_exit_reaper()
        if pid > 0 { exitReaper = pid }
    }

    /// Writes the SIGTERM source's empty slot, so that a zygote looks the slot's type up once
    /// for its workers. Never after ``watchStopSignal(_:)``, whose source it would drop.
    static func warmUpStopSignalSlot() {
        assert(stopSignalSource == nil, "the SIGTERM source is being watched")
        stopSignalSource = nil
    }

    /// Keeps the SIGTERM pipe's source alive (a released source stops watching).
    nonisolated(unsafe) private static var stopSignalSource: (any DispatchSourceRead)?

    /// The read end of the SIGTERM pipe (-1: none).
    nonisolated(unsafe) private static var stopSignalPipe: Int32 = -1

    /// The channel that the exit handler flushes.
    nonisolated(unsafe) private static var exitingChannel: WorkerChannel?
}
