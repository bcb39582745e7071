import AgentCommands
import AgentCore
import AgentLoop
import AgentOutputs
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// The parts the supervisor owns (``WorkHost``, ``FleetBridge``, ``MemoryService``,
/// ``ChatRelay``, ``QueryHost``): how they are wired to each other and to what the launcher
/// hands over, and the narrow protocols through which they reach supervision
/// (``ExecutorHost``, ``EventPublisher``).
extension Supervisor {
    /// Connects the parts to each other and to the processes (once, from `init`).
    func wireParts() {
        work.fleetBridge = fleetBridge
        // A disabled process's name too: enabled later, its history would hold events it never emitted.
        work.isProcessName = { [unowned self] name in
            table.byName[name] != nil || router.replicaGroups[name] != nil || table.disabled.contains { $0.name == name }
        }
        work.askChatbot = { [unowned self] text, adapter, conversation, answer in
            chat.ask(text, adapter: adapter, conversation: conversation, answer: answer)
        }
        fleetBridge.processStates = { [unowned self] in
            Dictionary(processes.map { ($0.name, SupervisedProcessInfo($0).stateName) }, uniquingKeysWith: { first, _ in first })
        }
        memory.runScope = { [unowned self] token, process in work.workflowRunScope(token: token, process: process) }
        chat.processes = { [unowned self] in processes }
        chat.processControl = { [unowned self] action, name in
            if let action = ProcessCommand.Action(rawValue: action) { _ = processCommand(action, name: name) }
        }
        queries.process = { [unowned self] name in processes.first { $0.name == name } }
        chat.tools.execute = { [unowned self] request, caller, respond in execute(request, caller: caller, respond: respond) }
        chat.tools.audit = { [unowned self] request, caller, answer in audit(request, caller: caller, answer: answer) }
        spares.spareEnded = { [unowned self] in orphans.scheduleSweep() }
        spares.closeLater = { [unowned self] fd in orphans.closeLater(fd) }
    }

    /// Hands over the agent's store, the fleet's database and the outputs (each may be nil)
    /// and passes each on to the parts that use it. Call once, before the work is set up
    /// (``WorkHost/setUp(_:agentDirectory:notifications:containment:)``) and ``run()``.
    package func attach(store: AgentStore?, fleet: (any FleetBackend)? = nil, outputs: OutputHub? = nil) {
        self.store = store
        self.outputs = outputs
        fleetBridge.join(fleet)
        memory.open(fleet: fleet, storage: store)
        work.attach(storage: store, fleet: fleet, outputs: outputs, memory: memory.store)
        queries.attach(store: store)
        chat.attach(store: store)
        loadSavedStates()
        updateEventTaps()
    }
}

extension Supervisor: @LoopActor ExecutorHost {
    /// Starts a task executor worker: a module's task handler for `type`, made from
    /// `settings`, shown by `status` as `name`. It is spawned like every worker (fork server,
    /// containment, the same fds) and never restarted: its runner decides what its end means.
    /// `stopTimeout`: seconds its handlers get to end when it is stopped (the task's
    /// `cancel_grace`), then SIGKILL.
    package func startExecutor(name: String, module: ModuleLocation, type: String, settings: JSONObject, stopTimeout: Double = 2) -> SupervisedProcess {
        var policy = ProcessPolicy()
        policy.restart = .never
        policy.maximumRestarts = nil
        policy.stopTimeout = stopTimeout
        let process = SupervisedProcess(PlannedProcess(name: name, type: type, kind: "task", module: module, settings: settings,
                                                       subscriptions: [], policy: policy))
        setProcesses(processes + [process])
        spawn(process)
        return process
    }

    /// Forgets an executor whose worker is gone (its counters stay in the totals).
    package func removeExecutor(_ process: SupervisedProcess) {
        guard !process.hasWorker, processes.contains(where: { $0 === process }) else { return }
        setProcesses(processes.filter { $0 !== process })
    }

    /// Whether the agent is stopping (no executor is started then).
    package var isStopping: Bool { stopping }
}

extension Supervisor: @LoopActor EventPublisher {
    package func publish(type: String, source: String, payload: [UInt8], timeNanoseconds now: Int64) {
        store?.append(type: type, source: source, time: Double(now) / 1e9, payload: payload)
        publishStored(type: type, source: source, payload: payload, timeNanoseconds: now)
    }

    package func publishStored(type: String, source: String, payload: [UInt8], timeNanoseconds now: Int64) {
        let typeBytes = Array(type.utf8), sourceBytes = Array(source.utf8)
        typeBytes.withUnsafeBytes { t in
            payload.withUnsafeBytes { p in
                console.event(source: source, type: t, timeNanoseconds: now, payload: p)
                // The frame is made once; routing has done with the scratch when the work publishes.
                router.scratch.removeAll(keepingCapacity: true)
                sourceBytes.withUnsafeBytes {
                    EventFrame.appendDelivery(EventFrame.Emitted(type: t, timeNanoseconds: now, payload: p), source: $0, to: router.scratch)
                }
            }
        }
        if let outputs, outputs.wants(.event) {
            outputs.publish(.event(source: source, type: type, payload: payload, time: now))
        }
        router.queueScratchUndroppable(type: type)
    }

    package func deliver(type: String, source: String, payload: [UInt8], to process: SupervisedProcess) {
        router.deliver(type: type, source: source, payload: payload, to: process)
    }

    package func send(_ kind: FrameKind, body: [UInt8], to process: SupervisedProcess) {
        FrameCodec.append(kind, body: body, to: process.control)
        markDirty(process)
    }

    package func subscribedTypes(prefix: String) -> [String] { router.subscribedTypes(prefix: prefix) }

    package func deliveryTargets(of types: [String]) -> [SupervisedProcess] { router.deliveryTargets(of: types) }

    package func routingChanged() { router.targetsChanged() }
}
