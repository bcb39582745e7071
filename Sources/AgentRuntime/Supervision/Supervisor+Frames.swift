import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    func channelReady(_ process: SupervisedProcess, events: UInt32) {
        if events & EventLoop.writable != 0 {
            process.waitingForWritable = false
            writer.updateInterest(process)
            markDirty(process)
        }
        guard events & ~EventLoop.writable != 0 else { return }
        if events & (EventLoop.hangup | EventLoop.peerClosed) != 0, process.emitRing != nil || process.pauseCount > 0 {
            // The worker is gone or shut its end, and this turn reads nothing here (it reads the ring first, or
            // it is paused): its reap drains the rest. The hang-up must not wake the loop again and again (a half
            // close spun it at 100 %), nor a worker that runs on stay mute (it is killed).
            loop.unregister(process.channelFD)
            deadlines.channelClosed(process)
            return
        }
        drainChannel(process)
    }

    /// Reads and handles the frames available on the worker's socket. Once the process is
    /// paused (a subscriber of its blocks), the rest stays unread and the frames already read
    /// are held in its decoder (handed out after the resume), so that a blocking subscriber's
    /// queue goes past its limit by one event at most. `all`: every frame whatever the pause (a
    /// dead worker's last words). With an emit ring, a frame on the socket waits for its
    /// marker in the ring, so that it keeps its place among the others.
    func drainChannel(_ process: SupervisedProcess, all: Bool = false) {
        let fd = process.channelFD
        let emitRing = process.emitRing != nil
        defer {
            if emitRing, process.awaitingSocketFrames == 0, process.emitRing != nil, !all {
                writer.updateInterest(process)
                scheduleEmitDrain(process)
            }
        }
        var slice = DrainSlice(seconds: all ? .infinity : configuration.drainSlice)
        func feed(_ chunk: UnsafeRawBufferPointer) -> Bool {
            do {
                // A closure literal: nothing is allocated or retained per frame for it.
                try process.decoder.feed(chunk) { kind, body in
                    if process.pauseCount > 0, !all { throw FrameDecoder.Hold() }
                    // A flood of small frames (messages, logs) yields the turn; the rest waits in the decoder.
                    if slice.spend() { throw FrameDecoder.Hold() }
                    // Even for a dead worker: its frames keep their places among the ring's.
                    if emitRing {
                        guard process.awaitingSocketFrames > 0 else { throw FrameDecoder.Hold() }
                        process.awaitingSocketFrames -= 1
                    }
                    try handle(kind, body, from: process)
                }
                return true
            } catch {
                logger.error("protocol error from worker: \(error); killing it", metadata: ["process": "\(process.name)"])
                loop.unregister(fd)
                kill(process, reason: "protocol error")
                return false
            }
        }
        // What a pause or a spent slice held back comes before anything new.
        if process.decoder.isHolding {
            guard feed(UnsafeRawBufferPointer(start: nil, count: 0)) else { return }
            if slice.isSpent { return scheduleChannelDrain(process) }
        }
        // A few reads per turn at most (the loop is level-triggered and comes back): a producer
        // that keeps its socket full must not starve the other workers, the writes of the
        // turn, or the replies they wait for.
        var reads = 0
        while fd >= 0, all || process.pauseCount == 0, all || reads < 4, all || !emitRing || process.awaitingSocketFrames > 0 {
            reads += 1
            let n = read(fd, readBuffer.baseAddress, readBuffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 {
                // EOF: the worker closed its end; its pidfd reports the exit (or it is killed).
                if n == 0 { loop.unregister(fd); deadlines.channelClosed(process) }
                return
            }
            guard feed(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n])) else { return }
            if slice.isSpent { return scheduleChannelDrain(process) }
            if n < readBuffer.count { return }
        }
    }

    /// Goes on with a socket drain that spent its slice at the next turn: the frames it holds
    /// may be all there is, and the socket would then not wake the loop again.
    private func scheduleChannelDrain(_ process: SupervisedProcess) {
        process.slicedDrains += 1
        guard !process.channelDrainScheduled else { return }
        process.channelDrainScheduled = true
        // Weak: a reload may remove the process before the next turn.
        loop.schedule(after: 0) { [weak self, weak process] in
            guard let self, let process else { return }
            process.channelDrainScheduled = false
            if process.channelFD >= 0, process.pauseCount == 0 { drainChannel(process) }
        }
    }

    /// One frame from a worker; events first, as they are nearly all of them.
    func handle(_ kind: FrameKind, _ body: UnsafeRawBufferPointer, from process: SupervisedProcess) throws {
        switch kind {
        case .event: try route(try EventFrame.parseEmitted(body), from: process)
        case .message: received(message: body, from: process)
        case .log: received(log: body, from: process)
        case .ready: becameReady(process, reaper: body)
        case .heartbeat: process.lastHeartbeat = EventLoop.now()
        case .lineRefused: process.linesRefused += 1
        case .taken: try received(taken: body, from: process)
        case .loadState: sendSavedState(to: process)
        case .saveState: save(state: body, of: process)
        case .query: try queries.answer(body, from: process)
        case .memory: memory.answerFrame(body, from: process)
        case .chatTool: try chat.tools.answer(body, from: process)
        case .taskProgress, .taskHeartbeat, .taskResult:
            guard let taskFrames = process.taskFrames else { throw FrameError("unexpected \(kind) frame from a worker that is not a task executor") }
            try taskFrames(kind, body)
        case .failure:
            let object = (try? JSONValue.parse(body))?.objectValue
            process.reportedFailure = (object?["code"]?.stringValue ?? "failure",
                                       object?["message"]?.stringValue ?? String(decoding: body, as: UTF8.self))
        default:
            throw FrameError("unexpected \(kind) frame from a worker")
        }
    }

    /// A message for people: the console, the outputs that want messages, the alerts.
    private func received(message body: UnsafeRawBufferPointer, from process: SupervisedProcess) {
        let level = Int(body.first ?? 1)
        let text = String(decoding: body.dropFirst(), as: UTF8.self)
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        if outputReader.admitsToLog(process.name, bytes: body.count) { console.message(source: process.name, level: level, text: text, timeNanoseconds: now) }
        if let outputs, outputs.wants(.message) {
            outputs.publish(.message(source: process.name, level: level, text: text, time: now))
        }
        chat.recordAlert(source: process.name, level: level, text: text)
    }

    /// A line for the agent's log, at the level its first byte says.
    private func received(log body: UnsafeRawBufferPointer, from process: SupervisedProcess) {
        guard outputReader.admitsToLog(process.name, bytes: body.count) else { return }
        let text = String(decoding: body.dropFirst(), as: UTF8.self)
        let level: Logger.Level = switch Int(body.first ?? 1) {
        case 0: .debug
        case 1: .info
        case 2: .warning
        case 3: .error
        default: .critical
        }
        logger.log(level: level, "\(text)", metadata: ["process": "\(process.name)"])
    }

    /// `reaper`: the ready frame's body, the worker's exit reaper's pid (4 bytes, little-endian)
    /// or nothing.
    private func becameReady(_ process: SupervisedProcess, reaper: UnsafeRawBufferPointer) {
        if reaper.count == 4 {
            process.exitReaper = max(0, Int32(littleEndian: reaper.loadUnaligned(as: Int32.self)))
        }
        process.readyAt = EventLoop.now()
        process.wasEverReady = true
        guard process.state == .starting else { return }
        record(process, "ready", "in \(((process.readyAt - process.spawnedAt) * 1000).fixed(1)) ms")
        setState(process, .running)
        // Not in this turn (a timer due now would run in its timer phase): the fork of the
        // spare is then off the path of the ready frame, and the new worker has its first moments.
        let library = process.module.library
        loop.schedule(after: 0.01) { [unowned self] in replenishSpare(for: library) }
        orphans.workerBecameReady()
        logger.info("ready in \(((process.readyAt - process.spawnedAt) * 1000).fixed(1)) ms", metadata: ["process": "\(process.name)"])
    }

    /// The worker took this many deliveries from its socket: room for more.
    private func received(taken body: UnsafeRawBufferPointer, from process: SupervisedProcess) throws {
        guard body.count == 8 else { throw FrameError("taken frame of \(body.count) bytes") }
        process.inFlight = max(0, process.inFlight - Int(clamping: UInt64(littleEndian: body.loadUnaligned(as: UInt64.self))))
        if process.pendingBytes > 0 { markDirty(process) }
    }

    private func sendSavedState(to process: SupervisedProcess) {
        if let state = process.savedState {
            FrameCodec.append(.stateData, body: [0] + state, to: process.control)
        } else {
            FrameCodec.append(.stateData, body: [1], to: process.control)
        }
        markDirty(process)
    }

    private func save(state body: UnsafeRawBufferPointer, of process: SupervisedProcess) {
        let data = Array(body)
        process.savedState = data
        guard let store else {
            acknowledgeStateSave(process, saved: true)
            return
        }
        // Acknowledged once committed: the state then survives any crash.
        let process = LoopOwned(process)
        store.saveState(process: process.value.name, data: data) { [inbox] saved in
            inbox.post { [self] in acknowledgeStateSave(process.value, saved: saved) }
        }
    }

    /// Sends an event to every process subscribed to its type, in the order it was emitted.
    func route(_ event: EventFrame.Emitted, from source: SupervisedProcess) throws {
        source.eventsEmitted += 1
        if router.targetsAreStale(of: source, type: event.type) {
            router.refreshTargets(of: source, type: event.type, triggers: work.triggers, published: fleetBridge.published)
        }
        if source.lastTypeRefused { return source.refuseType(log: logger) }
        // A piece of a streamed answer is for the front that asked, not an event: not kept,
        // tapped, routed or published (up to thousands a message).
        if source.isChatbot, source.lastEmittedTypeName == ChatRelay.partialType {
            return chat.botEmitted(type: ChatRelay.partialType, payload: event.payload, from: source)
        }
        if taps.any { tap(event, from: source) }
        if source.isChatbot { chat.botEmitted(type: source.lastEmittedTypeName, payload: event.payload, from: source) }
        if router.queueForSingleTarget(event, from: source) { return }
        if let triggers = source.lastTriggers {
            work.fire(triggers, type: source.lastEmittedTypeName, source: source.name, timeNanoseconds: event.timeNanoseconds, payload: event.payload)
        }
        if source.lastPublished {
            fleetBridge.publish(type: source.lastEmittedTypeName, source: source.name, timeNanoseconds: event.timeNanoseconds, payload: event.payload)
        }
        let targets = source.lastTargets
        let groups = source.lastGroups
        guard !targets.isEmpty || !groups.isEmpty else { return }
        router.scratch.removeAll(keepingCapacity: true)
        source.nameBytes.withUnsafeBytes { EventFrame.appendDelivery(event, source: $0, to: router.scratch) }
        for target in targets where target.acceptsDeliveries { queueScratch(for: target, from: source) }
        for group in groups {
            if let target = group.pick(bytes: router.scratch.count) { queueScratch(for: target, from: source) }
        }
    }

    /// Queues the delivery frame in the router's scratch for `target`, applying its `when_full`
    /// when its queue has no room.
    @inline(__always)
    private func queueScratch(for target: SupervisedProcess, from source: SupervisedProcess) {
        let limit = target.queueLimit
        if target.pendingBytes + router.scratch.count > limit {
            if target.policy.whenFull == "block" {
                pause(source, behind: target)
            } else {
                let dropped = target.dropOldestDeliveries(freeing: max(router.scratch.count, limit / 4))
                target.eventsDropped += dropped
                if dropped > 0, target.eventsDropped == dropped || target.eventsDropped / 10_000 != (target.eventsDropped - dropped) / 10_000 {
                    logger.warning("event queue full (\(limit) bytes): dropped the \(dropped) oldest undelivered event(s), \(target.eventsDropped) so far", metadata: ["process": "\(target.name)"])
                }
            }
        }
        router.scratch.withUnsafeBytes { target.outgoing.append($0) }
        target.eventsDelivered += 1
        markDirty(target)
    }

    /// Shows, stores and publishes an event, as configured.
    private func tap(_ event: EventFrame.Emitted, from source: SupervisedProcess) {
        console.event(source: source.name, type: event.type, timeNanoseconds: event.timeNanoseconds, payload: event.payload)
        if let store {
            store.append(type: source.lastEmittedTypeName, source: source.name, time: Double(event.timeNanoseconds) / 1e9,
                         payload: event.payload)
        }
        if let outputs, outputs.wants(.event) {
            outputs.publish(.event(source: source.name, type: source.lastEmittedTypeName, payload: Array(event.payload), time: event.timeNanoseconds))
        }
    }

    /// Tells the worker whether its state was stored. Not stored means the store cannot write
    /// (it is degraded: disk full, read-only): the worker gets AGENT_STORE_UNAVAILABLE, an
    /// error its module can handle, and goes on; `savedState` still has the state for a
    /// restart in this run.
    func acknowledgeStateSave(_ process: SupervisedProcess, saved: Bool) {
        guard process.hasWorker else { return }
        FrameCodec.append(.stateSaved, body: [saved ? 0 : 2], to: process.control)
        markDirty(process)
    }

    package func markDirty(_ process: SupervisedProcess) {
        router.markDirty(process)
    }

    /// Writes queued frames to every worker that has some, once per loop turn (so frames
    /// routed in one turn share a write).
    package func flushDirty() {
        router.flushDirty { write($0) }
    }

    /// Writes what the worker may have now (see ``DeliveryWriter``); producers paused behind
    /// it resume once its queue is half empty.
    private func write(_ process: SupervisedProcess) {
        guard writer.write(process, killing: { kill($0, reason: "protocol error") }) else { return }
        if !process.pausedProducers.isEmpty, process.pendingBytes <= process.queueLimit / 2 { resumeProducers(of: process) }
    }

    /// `when_full: block`: stop reading from a producer while a subscriber of its is full; the
    /// producer's worker then blocks in emit once its own buffer fills.
    func pause(_ producer: SupervisedProcess, behind subscriber: SupervisedProcess) {
        guard !subscriber.pausedProducers.contains(where: { $0 === producer }) else { return }
        subscriber.pausedProducers.append(producer)
        producer.pauseCount += 1
        if producer.pauseCount == 1, producer.channelFD >= 0, loop.isRegistered(producer.channelFD) {
            writer.updateInterest(producer)
            // Its delivery window no longer applies (see write).
            if producer.pendingBytes > 0 { markDirty(producer) }
            producer.timesPaused += 1
            // A producer held back by a small blocking queue pauses and resumes every few
            // thousand events: the first pause is logged, then one line a minute at most.
            let now = EventLoop.now()
            if producer.timesPaused == 1 || now - producer.pauseLoggedAt >= 60 {
                let since = producer.timesPaused - producer.timesPausedLogged
                let count = producer.timesPaused == 1 ? "" : ", \(since) times since the last message"
                logger.info("paused: \(subscriber.name) is behind (its queue is full and it blocks producers)\(count)", metadata: ["process": "\(producer.name)"])
                producer.pauseLoggedAt = now
                producer.timesPausedLogged = producer.timesPaused
            }
        }
    }

    /// The subscriber caught up (or went away): read from its producers again.
    func resumeProducers(of subscriber: SupervisedProcess) {
        let producers = subscriber.pausedProducers
        subscriber.pausedProducers = []
        for producer in producers {
            producer.pauseCount -= 1
            if producer.pauseCount == 0 { producer.lastHeartbeat = EventLoop.now() }
            if producer.pauseCount == 0, producer.channelFD >= 0, loop.isRegistered(producer.channelFD) {
                writer.updateInterest(producer)
                // Its emit ring is not read while it is paused: a signal may not come again.
                scheduleEmitDrain(producer)
                // Frames held at the pause: the socket may have nothing new to wake the loop.
                if producer.decoder.isHolding {
                    // Weak: a reload may remove the process before the next turn.
                    loop.schedule(after: 0) { [weak self, weak producer] in
                        guard let self, let producer else { return }
                        if producer.channelFD >= 0, producer.pauseCount == 0 { drainChannel(producer) }
                    }
                }
            }
        }
    }
}
