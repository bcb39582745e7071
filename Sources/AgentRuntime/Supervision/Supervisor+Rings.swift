import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import Logging

extension Supervisor {
    /// The most of a worker's emit ring handled in one loop turn: a producer that keeps its
    /// ring full must not starve the other workers, the writes of the turn, or the replies
    /// they wait for. Tiny frames are bounded by time as well (`drainSlice`).
    static let emitRingBudget = 1 << 20

    /// Gives a new worker its rings (see ``WorkerRings``): those a warm spare got when it was
    /// made, or new ones. Without rings (memfd, mmap or eventfd failing) deliveries and the
    /// worker's frames go on the socket, as they would with an older worker;
    /// `AGENT_SHARED_RINGS=0` asks for that.
    func attachRing(to process: SupervisedProcess, given: WorkerRings? = nil) {
        process.awaitingSocketFrames = 0
        guard configuration.sharedRings else { return }
        do {
            let rings = try given ?? WorkerRings.make(sendingOn: process.channelFD)
            process.ring = rings.delivery
            process.emitRing = rings.emit
            process.emitRoomFD = rings.roomFD
            process.roomSignalFD = rings.signalFD
            // Edge-triggered, never read: each signal wakes the loop once, and the read() that
            // reset its counter was a system call per wake-up (per event at 10,000 events/s).
            // The counter does not fill: a worker signals by 1, at most once per wait (one that
            // wrote a huge count stops only its own signals, as one that never signals would).
            loop.register(rings.signalFD, events: EventLoop.readable | EventLoop.edgeTriggered) { [unowned self, unowned process] _ in
                markDirty(process)
                drainEmitRing(process)
            }
        } catch {
            logger.warning("no shared rings (\(error)); events go on the socket", metadata: ["process": "\(process.name)"])
        }
    }

    /// Lets go of a dead worker's rings (what the delivery ring held was kept before).
    func detachRing(from process: SupervisedProcess) {
        if process.roomSignalFD >= 0 {
            loop.unregister(process.roomSignalFD)
            close(process.roomSignalFD)
        }
        process.roomSignalFD = -1
        if process.emitRoomFD >= 0 { close(process.emitRoomFD) }
        process.emitRoomFD = -1
        process.ring = nil
        process.emitRing = nil
        process.awaitingSocketFrames = 0
    }

    /// Handles the frames the worker published in its emit ring, in order, and gives their
    /// room back (telling the worker if it waits for it). Stops at an `onSocket` marker until
    /// that frame was read from the socket, and, like `drainChannel`, once the process is paused
    /// (unless `all`: a dead worker's last words). With nothing left, asks the worker to signal
    /// its next frame.
    func drainEmitRing(_ process: SupervisedProcess, all: Bool = false) {
        var budget = all ? Int.max : Self.emitRingBudget
        var slice = DrainSlice(seconds: all ? .infinity : configuration.drainSlice)
        while let ring = process.emitRing {
            if process.awaitingSocketFrames > 0 {
                guard all else { return }
                // Dead: the announced frame is on the socket whole, or it never will be.
                drainChannel(process, all: true)
                if process.awaitingSocketFrames > 0 { process.awaitingSocketFrames = 0 }
            }
            if process.pauseCount > 0, !all { return }
            guard let readable = ring.readable() else { return emitRingBroken(process, "its head is out of range", dead: all) }
            if readable.count == 0 {
                if all || ring.prepareToWait() { return }
                continue
            }
            ring.cancelWait()
            guard budget > 0, !slice.isSpent else {
                if slice.isSpent { process.slicedDrains += 1 }
                scheduleEmitDrain(process)
                return
            }
            let pass = takeFrames(readable, from: process, budget: budget, slice: &slice, all: all)
            budget -= pass.used
            if ring.release(pass.used), process.emitRoomFD >= 0 {
                var one: UInt64 = 1
                _ = write(process.emitRoomFD, &one, 8)
            }
            if let broken = pass.broken { return emitRingBroken(process, broken, dead: all) }
            if process.awaitingSocketFrames > 0, !all {
                writer.updateInterest(process)
                drainChannel(process)
            }
        }
    }

    /// What one pass over an emit ring's readable bytes took: the bytes to give back, why the
    /// ring is broken if it is, and whether the pass stopped early (budget, pause, marker).
    struct RingPass {
        var used = 0
        var broken: String?
        var stopped = false
    }

    /// Handles the frames in `readable`, in order, events to a single subscriber as runs.
    @inline(__always)
    private func takeFrames(_ readable: UnsafeRawBufferPointer, from process: SupervisedProcess, budget: Int, slice: inout DrainSlice, all: Bool) -> RingPass {
        var pass = RingPass()
        // Consecutive events that go to one subscriber as one run (copied out before the
        // room is given back).
        var run = PendingRun()
        // Looked up again after anything that may change the source's targets or its
        // subscriber's queue: a flushed run, a frame handled on its own.
        var window: RunWindow?
        var windowLooked = false
        while !pass.stopped, readable.count - pass.used >= FrameCodec.headerLength {
            // The worker can write to the ring at any time: the length is read once.
            let length = Int(FrameCodec.readUInt32(readable, at: pass.used))
            guard length >= 1, length <= readable.count - pass.used - 4 else {
                pass.broken = "a frame of \(length) bytes where \(readable.count - pass.used - 4) are published"
                break
            }
            let kind = FrameKind(rawValue: readable[pass.used + 4])
            let body = UnsafeRawBufferPointer(rebasing: readable[(pass.used + 5)..<(pass.used + 4 + length)])
            if kind == .event, !windowLooked {
                window = runWindow(of: process)
                windowLooked = true
            }
            if kind == .event, let limit = window?.limit(body, of: process, runBytes: run.end - run.start, frameBytes: 4 + length) {
                if run.count > 0, run.end - run.start + 4 + length > limit {
                    if let problem = flushRun(&run, readable, from: process) {
                        pass.broken = problem
                        break
                    }
                    // Looked at again: the flushed run's header took some of the queue's room.
                    windowLooked = false
                    continue
                }
                if run.count == 0 { run.start = pass.used }
                pass.used += 4 + length
                run.end = pass.used
                run.count += 1
                pass.stopped = pass.used >= budget || slice.spend()
                continue
            }
            if let problem = flushRun(&run, readable, from: process) {
                pass.broken = problem
                break
            }
            windowLooked = false
            pass.used += 4 + length
            if kind == .onSocket {
                process.awaitingSocketFrames += 1
                pass.stopped = true
                continue
            }
            if let problem = handleRingFrame(kind, body, from: process) {
                pass.broken = problem
                break
            }
            pass.stopped = (process.pauseCount > 0 && !all) || pass.used >= budget || slice.spend()
        }
        if let problem = flushRun(&run, readable, from: process), pass.broken == nil { pass.broken = problem }
        if pass.broken == nil, !pass.stopped, pass.used < readable.count {
            pass.broken = "\(readable.count - pass.used) bytes that are not a whole frame"
        }
        return pass
    }

    /// Handles one frame of the ring that is not part of a run; returns the error if it broke
    /// the protocol.
    @inline(__always)
    private func handleRingFrame(_ kind: FrameKind, _ body: UnsafeRawBufferPointer, from process: SupervisedProcess) -> String? {
        do {
            if kind == .event {
                try handle(kind, body, from: process)
            } else {
                // Rare frames are parsed (as text, JSON) from a private copy: the worker
                // could change the ring's bytes between a check and a use.
                try Array(body).withUnsafeBytes { try handle(kind, $0, from: process) }
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The run window of `source`'s events now, if they can go as a run.
    private func runWindow(of source: SupervisedProcess) -> RunWindow? {
        guard let single = source.singleTarget, router.targetsAreCurrent(of: source), !taps.eachEvent, !source.isChatbot else { return nil }
        let typeCount = source.lastEmittedType.count
        return single._withUnsafeGuaranteedRef { target -> RunWindow? in
            guard target.acceptsDeliveries else { return nil }
            let header = EventFrame.runHeaderLength(typeCount: typeCount, sourceCount: source.nameBytes.count)
            return RunWindow(typeCount: typeCount, room: target.queueLimit - target.pendingBytes - header,
                             runLimit: min(EventFrame.runEntriesLimit, target.queueLimit / 8))
        }
    }

    /// Queues the pending run for its subscriber, as one `deliverRun` frame. The copy is checked
    /// again, entry by entry: the worker can change its ring after `RunWindow.limit` looked. If it did,
    /// only the run's well-formed first entries go (the others are counted as dropped), and the
    /// problem is returned.
    private func flushRun(_ run: inout PendingRun, _ readable: UnsafeRawBufferPointer, from source: SupervisedProcess) -> String? {
        defer { run = PendingRun() }
        guard run.count > 0, let single = source.singleTarget else { return nil }
        let count = run.count
        let entries = UnsafeRawBufferPointer(rebasing: readable[run.start..<run.end])
        source.eventsEmitted += count
        return single._withUnsafeGuaranteedRef { target -> String? in
            let frameStart = target.outgoing.count
            let checked = source.lastEmittedType.withUnsafeBytes { type in
                source.nameBytes.withUnsafeBytes { EventFrame.appendRun(entries, count: count, type: type, source: $0, to: target.outgoing) }
            }
            if let store, checked.count > 0 {
                // The checked copy, where the worker can no longer change it: the store gets
                // exactly what was delivered, in one hand-over.
                let entriesStart = frameStart + EventFrame.runHeaderLength(typeCount: source.lastEmittedType.count, sourceCount: source.nameBytes.count)
                target.outgoing.withUnsafeBytes { frames in
                    store.appendRun(type: source.lastEmittedTypeName, source: source.name,
                                    entries: UnsafeRawBufferPointer(rebasing: frames[entriesStart...]), count: checked.count)
                }
            }
            target.eventsDelivered += checked.count
            if checked.count > 0 { markDirty(target) }
            guard checked.intact else {
                target.eventsDropped += count - checked.count
                let dropped = count - checked.count
                return "its event frames changed after they were checked (" + (dropped > 0 ? "\(dropped) of a run of \(count) events dropped)" : "a run of \(count) events ended in bytes that were not there before)")
            }
            return nil
        }
    }

    /// The worker broke the emit ring's protocol: it is killed (once; it is reaped later), unless
    /// it is `dead` already (its pid may be another process's by now).
    private func emitRingBroken(_ process: SupervisedProcess, _ problem: String, dead: Bool) {
        logger.error("protocol error in the worker's emit ring: \(problem)\(dead ? "" : "; killing it")", metadata: ["process": "\(process.name)"])
        process.emitRing = nil
        if !dead { kill(process, reason: "protocol error") }
    }

    /// Drains the emit ring again at the next loop turn (after this turn's writes).
    func scheduleEmitDrain(_ process: SupervisedProcess) {
        guard process.emitRing != nil, !process.emitDrainScheduled else { return }
        process.emitDrainScheduled = true
        // Weak: a reload may remove the process before the next turn.
        loop.schedule(after: 0) { [weak self, weak process] in
            guard let self, let process else { return }
            process.emitDrainScheduled = false
            drainEmitRing(process)
        }
    }
}
