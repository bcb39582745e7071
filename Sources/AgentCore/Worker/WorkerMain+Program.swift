import Foundation
import JSONSchema

extension WorkerMain {
    /// A `jsonl/1` module's process or task handler: the worker starts the manifest's command
    /// for the type and bridges it (``ProgramBridge``) on this thread, which lives until the
    /// worker exits (the program's parent-death signal follows it). The worker says ready when
    /// the program does, and exits as the program did.
    static func runProgram(channel: WorkerChannel, start: JSONValue, ring: RingReceiver?, prepared: PreparedHost?, manifestFile: String,
                           module: String, type: String, name: String) -> Never {
        let manifest: ModuleManifest
        do {
            manifest = try ModuleManifest(programManifest: manifestFile, module: module)
        } catch {
            fail(channel, code: error.code.rawValue, error.message, exitCode: ExitCode.moduleUnusable)
        }
        let isTask = start["task"]?.boolValue == true
        guard let declared = manifest.processType(type), let command = declared.command, (declared.kind == "task") == isTask else {
            let known = manifest.processes.map { "\"\($0.type)\" (\($0.kind))" }.joined(separator: ", ")
            fail(channel, code: "unknown_type", "module \"\(module)\" (\(manifestFile)) has no \(isTask ? "task" : "process") type \"\(type)\" (it has \(known.isEmpty ? "none" : known))",
                 exitCode: ExitCode.badSettings)
        }
        let child: ProgramChild
        do {
            child = try ProgramChild.start(command: command, directory: manifest.directory ?? ".")
        } catch {
            fail(channel, code: "program_not_started", "\(error)", exitCode: ExitCode.moduleUnusable)
        }
        let stopGrace = (start["stop_timeout_ms"]?.numberValue?.doubleValue ?? 10_000) / 2000
        var made: ProgramBridge?
        // The reader goes at once: the program's state comes through it before the ready.
        let started = startHost(channel: channel, start: start, ring: ring, prepared: prepared) { host in
            let bridge = ProgramBridge(host: host, child: child, process: name, kind: declared.kind)
            // Before the reader thread starts: no run or stop frame finds the bridge missing.
            if isTask { host.taskFrames = { bridge.handleTaskFrame($0, $1) } }
            host.onStop = { bridge.stop(grace: stopGrace) }
            made = bridge
        }
        started.releaseReader()
        let host = started.host
        guard let bridge = made else { fail(channel, code: "protocol", "the bridge was not made", exitCode: ExitCode.failure) }
        let watchdog = (start["watchdog_ms"]?.numberValue?.doubleValue).flatMap { $0 > 0 ? $0 / 1000 : nil }
        let state = isTask ? nil : bridge.loadState()
        startExitReaper()
        bridge.write(.start(JSONLinesFrame.Start(settings: start["settings"] ?? .object([:]), process: name, type: type,
                                                 state: state, watchdog: watchdog)))
        watchStopSignal(host)
        if declared.kind == "monitor" {
            WorkerThread.start("agent-events") { bridge.pumpEvents() }
        }
        // The program's end is awaited beside the reading: a child it left holding its stdout
        // would otherwise hide a crash until that child ends.
        let reaped = DispatchSemaphore(value: 0)
        WorkerThread.start("agent-program-wait") {
            let status = child.wait()
            bridge.endStatus.withLock { $0 = status }
            bridge.programEnded.store(true, ordering: .releasing)
            reaped.signal()
        }
        bridge.readLines()
        reaped.wait()
        exitAsProgram(channel: channel, bridge: bridge, ended: bridge.endStatus.withLock { $0 })
    }

    /// Exits as the program ended: 0 (or any end once the stop was asked) is a success; 78
    /// and 70 say, as for a library module, that its settings or the module itself must be
    /// fixed (no restart); anything else is a failure that the restart policy handles.
    private static func exitAsProgram(channel: WorkerChannel, bridge: ProgramBridge, ended: (code: Int32?, signal: Int32?)) -> Never {
        if bridge.host.isStopping || ended.code == 0 {
            channel.flush()
            exit(ExitCode.success)
        }
        let said = bridge.lastError.withLock { $0 }.map { ": \($0)" } ?? ""
        switch ended {
        case (ExitCode.badSettings?, _):
            fail(channel, code: "bad_settings", "the program exited with status 78 (bad settings)\(said)", exitCode: ExitCode.badSettings)
        case (ExitCode.moduleUnusable?, _):
            fail(channel, code: "module_unusable", "the program exited with status 70 (unusable)\(said)", exitCode: ExitCode.moduleUnusable)
        case (let code?, _):
            fail(channel, code: "process_failed", "the program exited with status \(code)\(said)", exitCode: ExitCode.failure)
        case (nil, let signal?):
            let signalName = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
            fail(channel, code: "process_failed", "the program was killed by signal \(signal) (\(signalName))\(said)", exitCode: ExitCode.failure)
        case (nil, nil):
            fail(channel, code: "process_failed", "the program ended in a way its worker could not learn\(said)", exitCode: ExitCode.failure)
        }
    }
}
