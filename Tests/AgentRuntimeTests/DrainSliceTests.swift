@testable import AgentBase
@testable import AgentCore
@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// A flood of tiny frames must not hold the supervisor's loop: a drain of a worker's frames
/// stops when its time slice is spent and goes on at the next turn. Each test lets a real
/// worker fill its emit ring (or its socket) while the loop does not turn, then turns the loop
/// once with a slice of zero: that one turn handles a few dozen frames, not the thousands
/// waiting (the byte budget alone would have taken them all), and the rest follow in later turns.
@Suite(.ownThreads, .serialized) struct DrainSliceTests {
    private static let count = 10_000

    private func supervisor(rings: Bool) -> Supervisor {
        var environment = ProcessInfo.processInfo.environment
        environment["AGENT_SHARED_RINGS"] = rings ? "1" : "0"
        var configuration = SupervisorConfiguration(workerPath: TestPaths.products + "/agent-worker", environment: environment)
        configuration.drainSlice = 0
        let source = PlannedProcess(name: "flood", type: "bench_source", kind: "datasource",
                                    module: ModuleLocation(name: "bench", library: TestPaths.products + "/libbench.so", sourceDirectory: nil),
                                    settings: ["count": .number(JSONNumber(Self.count)), "payload_bytes": 27, "start_delay": 0.2],
                                    subscriptions: [], policy: ProcessPolicy())
        return Supervisor.make(configuration: configuration, processes: [source],
                               console: ConsoleOutput(json: false, showEvents: false, fd: -1), logger: Logger(label: "test"))
    }

    /// Event frames published in `ring` and not yet taken.
    private func framesWaiting(in ring: SharedRing) -> Int {
        guard let readable = ring.readable() else { return 0 }
        var offset = 0, frames = 0
        while readable.count - offset >= FrameCodec.headerLength {
            let length = Int(FrameCodec.readUInt32(readable, at: offset))
            guard length >= 1, offset + 4 + length <= readable.count else { break }
            if FrameKind(rawValue: readable[offset + 4]) == .event { frames += 1 }
            offset += 4 + length
        }
        return frames
    }

    /// Event frames in a socket's receive queue, peeked (not taken).
    private func framesWaiting(on fd: Int32) -> Int {
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        let count = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        guard count > 0 else { return 0 }
        return bytes.withUnsafeBytes { raw in
            var offset = 0, frames = 0
            while count - offset >= FrameCodec.headerLength {
                let length = Int(FrameCodec.readUInt32(raw, at: offset))
                guard length >= 1, offset + 4 + length <= count else { break }
                if FrameKind(rawValue: raw[offset + 4]) == .event { frames += 1 }
                offset += 4 + length
            }
            return frames
        }
    }

    /// Waits, without turning the loop, until `condition` holds (the worker fills what it writes to).
    private func waitUnturned(_ what: String, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("no \(what) within 60 s")
                return false
            }
            usleep(2_000)
        }
        return true
    }

    private func floodIsTakenInSlices(rings: Bool) {
        let supervisor = supervisor(rings: rings)
        supervisor.inbox.isolated {
            supervisor.startInTurns(supervisor.processes)
            defer {
                supervisor.stopAll()
                supervisor.run(until: { supervisor.processes.allSatisfy { !$0.hasWorker } }, timeout: 60)
            }
            guard let flood = supervisor.processes.first(where: { $0.name == "flood" }) else { Issue.record("no process"); return }
            supervisor.run(until: { flood.state == .running }, timeout: 60)
            #expect(flood.state == .running)
            if rings {
                guard let ring = flood.emitRing else { Issue.record("the worker got no emit ring"); return }
                guard waitUnturned("5,000 events in the emit ring", { framesWaiting(in: ring) >= 5_000 }) else { return }
            } else {
                #expect(flood.emitRing == nil)
                // Not a number of bytes: the socket's buffer is bounded by the kernel's size of
                // each write (~770 B however small), and a loaded machine can make the worker
                // write its frames nearly one at a time: then ~270 frames, ~19 KiB, fill it.
                guard waitUnturned("200 events on the worker's socket", { framesWaiting(on: flood.channelFD) >= 200 }) else { return }
            }
            let before = flood.eventsEmitted
            var turns = 0
            supervisor.run(until: { defer { turns += 1 }; return turns >= 1 }, timeout: 60)
            let taken = flood.eventsEmitted - before
            // A drain by the fd's handler and its continuation by a timer of the same turn.
            #expect(taken <= 2 * DrainSlice.framesPerLook, "one turn took \(taken) events")
            #expect(flood.slicedDrains >= 1)
            supervisor.run(until: { flood.eventsEmitted >= Self.count + 1 }, timeout: 120)
            #expect(flood.eventsEmitted == Self.count + 1, "the flood's events were not all taken")
            #expect(flood.state == .running)
        }
    }

    @Test func aFloodOfTinyEventsInTheEmitRingIsTakenAFewDozenPerTurn() {
        floodIsTakenInSlices(rings: true)
    }

    @Test func aFloodOfTinyFramesOnTheSocketIsTakenAFewDozenPerTurn() {
        floodIsTakenInSlices(rings: false)
    }
}
