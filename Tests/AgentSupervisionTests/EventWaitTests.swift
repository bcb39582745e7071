import AgentBase
import AgentModuleABI
import AgentTestSupport
import CAgentSystem
import Foundation
import Glibc
import Testing
@testable import AgentCore

/// `wait_events`: a module's thread sleeps in the host until events are there, and the
/// supervisor's publish on the delivery ring wakes it itself (no frame on the socket, no
/// reader thread in between). The real worker host over a real ring and socketpair; the
/// ring's producer side stands where the supervisor does.
@Suite(.ownThreads) struct EventWaitTests {
    /// A worker host with a delivery ring, its channel on one end of a socketpair; the
    /// caller closes the fds.
    static func host(ring: Bool = true) throws -> (host: WorkerHost, producer: SharedRing?, fds: [Int32]) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        guard ring else { return (WorkerHost(channel: WorkerChannel(fd: fds[0])), nil, fds) }
        let (producer, consumer) = try SharedRingTests.pair()
        return (WorkerHost(channel: WorkerChannel(fd: fds[0]), ring: RingReceiver(ring: consumer, roomSignal: -1)), producer, fds)
    }

    /// Calls `wait_events` on a thread of its own; `outcome` says what it returned, once it has.
    final class Waiter: @unchecked Sendable {
        private let result = LockedValue<Int32?>(nil)
        /// The thread's name, unique in the process, to find it in /proc/self/task.
        private let name: String
        private let thread: Thread
        private static let count = LockedValue(0)

        init(_ host: WorkerHost, timeoutMilliseconds: Int64 = -1) {
            let result = self.result
            let name = Self.uniqueName()
            self.name = name
            thread = Thread {
                agent_set_thread_name(name)
                let api = host.api
                let status = api.wait_events!(api.host_ctx, timeoutMilliseconds)
                result.withLock { $0 = status }
            }
            thread.start()
        }

        /// What the wait returned, waiting up to 30 s for it (a loaded machine).
        func outcome() -> Int32? {
            let deadline = Date().addingTimeInterval(30)
            while result.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
            return result.withLock { $0 }
        }

        var hasReturned: Bool { result.withLock { $0 } != nil }

        /// Waits until the thread is inside `futex` (the ring's word: the only one it can block
        /// on here), so that what the test does next meets a sleeper, not one about to sleep.
        func awaitAsleep() -> Bool { Self.asleep(name) }

        static func uniqueName() -> String { "evwait-\(count.withLock { $0 += 1; return $0 })" }

        /// Whether the thread named `name` is inside `futex`, waiting up to 30 s for it.
        static func asleep(_ name: String) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
                    guard (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) == name + "\n" else { continue }
                    let channel = (try? String(contentsOfFile: "/proc/self/task/\(task)/wchan", encoding: .utf8)) ?? ""
                    if channel.hasPrefix("futex") { return true }
                }
                usleep(1_000)
            }
            return false
        }
    }

    /// A thread blocked in `next_events` (no timeout), named for ``Waiter/asleep(_:)``.
    final class Receiver: @unchecked Sendable {
        private let result = LockedValue<String?>(nil)
        private let name: String

        init(_ host: WorkerHost) {
            let result = self.result
            let name = Waiter.uniqueName()
            self.name = name
            Thread {
                agent_set_thread_name(name)
                var event = agent_event()
                var count = 0
                let api = host.api
                guard api.next_events!(api.host_ctx, -1, &event, 1, &count) == AGENT_OK, count == 1 else { return }
                let text = String(decoding: DeliveryRunTests.payload(event), as: UTF8.self)
                result.withLock { $0 = text }
            }.start()
        }

        func awaitAsleep() -> Bool { Waiter.asleep(name) }

        /// What it received, waiting up to 30 s for it.
        func received() -> String? {
            let deadline = Date().addingTimeInterval(30)
            while result.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
            return result.withLock { $0 }
        }
    }

    /// Waits until the consumer raised its flag for a sleep on the ring's word: it sleeps, or
    /// is about to.
    static func awaitSleeper(_ producer: SharedRing) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !producer.consumerSleeps, Date() < deadline { usleep(1_000) }
        return producer.consumerSleeps
    }

    static func publish(_ producer: SharedRing, payload: String) -> Bool {
        DeliveryRunTests.delivery("tick", "clock", time: 1, payload: Array(payload.utf8)).withUnsafeBytes { producer.write($0) }
        return producer.publish()
    }

    /// A delivery as the reader thread handles one that came on the socket.
    static func deliverOnSocket(_ host: WorkerHost, payload: String) {
        DeliveryRunTests.delivery("tick", "clock", time: 1, payload: Array(payload.utf8)).withUnsafeBytes { frame in
            host.handle(.deliver, UnsafeRawBufferPointer(rebasing: frame[FrameCodec.headerLength...]))
        }
        host.publishDeliveries()
    }

    /// The next event `next_events` hands out at once, as text.
    static func take(_ host: WorkerHost) -> String? {
        var event = agent_event()
        var count = 0
        let api = host.api
        guard api.next_events!(api.host_ctx, 0, &event, 1, &count) == AGENT_OK, count == 1 else { return nil }
        return String(decoding: DeliveryRunTests.payload(event), as: UTF8.self)
    }

    static func threadCPUNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test func aSleepingWaitIsWokenByThePublishItselfWithNoFrameToSend() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        let waiter = Waiter(host)
        #expect(Self.awaitSleeper(producerRing), "the wait never raised its flag")
        #expect(!waiter.hasReturned, "the wait returned with nothing there")
        #expect(!Self.publish(producerRing, payload: "one"), "a sleeper on the ring's word needs no wake frame")
        // Required: a wait that never returns still holds nothing the rest would need, but
        // the rest would say nothing more.
        try #require(waiter.outcome() == Int32(AGENT_OK))
        #expect(Self.take(host) == "one")
        #expect(!producerRing.consumerWaits, "the flag stays down once the wait is over")
    }

    @Test func aWaitEndsAtOnceForEventsNotHandedOutAndSleepsPastThoseThatWere() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        #expect(!Self.publish(producerRing, payload: "one"))
        #expect(!Self.publish(producerRing, payload: "two"))
        let api = host.api
        #expect(api.wait_events!(api.host_ctx, -1) == Int32(AGENT_OK), "published events end the wait at once")
        #expect(Self.take(host) == "one")
        #expect(api.wait_events!(api.host_ctx, -1) == Int32(AGENT_OK), "the batch's second event is still there")
        #expect(Self.take(host) == "two")
        // Everything was handed out (the batch is not released yet): the wait must sleep, not
        // return (a module's loop would spin on it) nor spin itself until its timeout.
        let start = Date()
        let cpu = Self.threadCPUNanoseconds()
        #expect(api.wait_events!(api.host_ctx, 200) == Int32(AGENT_TIMEOUT))
        #expect(Date().timeIntervalSince(start) >= 0.19, "the wait returned before its timeout")
        let spent = Self.threadCPUNanoseconds() - cpu
        #expect(spent < 50_000_000, "the wait spun: \(spent / 1_000_000) ms of CPU in 200 ms")
    }

    @Test func aWakeEndsTheWaitInProgressOrElseTheNextOne() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        let api = host.api
        // Woken before it started: the next wait returns at once.
        api.wake_events_wait!(api.host_ctx)
        #expect(api.wait_events!(api.host_ctx, -1) == Int32(AGENT_TIMEOUT))
        // Woken while it sleeps.
        let waiter = Waiter(host)
        #expect(Self.awaitSleeper(producerRing))
        api.wake_events_wait!(api.host_ctx)
        #expect(waiter.outcome() == Int32(AGENT_TIMEOUT))
        #expect(!producerRing.consumerWaits, "a woken wait leaves no flag for the next publish")
    }

    @Test func theStopAndADeliveryOnTheSocketEndTheWaitFromTheReaderThread() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        // A delivery too big for the ring comes on the socket; the reader thread handles it.
        let waiter = Waiter(host)
        #expect(Self.awaitSleeper(producerRing))
        Self.deliverOnSocket(host, payload: "big")
        try #require(waiter.outcome() == Int32(AGENT_OK))
        #expect(Self.take(host) == "big")

        let stopped = Waiter(host)
        #expect(Self.awaitSleeper(producerRing))
        host.requestStop()
        #expect(stopped.outcome() == Int32(AGENT_STOPPED))
        let api = host.api
        #expect(api.wait_events!(api.host_ctx, -1) == Int32(AGENT_STOPPED), "once stopping, a wait returns at once")
    }

    /// Another receive of the process (a second task receiving, on another thread) overwrites
    /// the ring's flag while a wait sleeps on it: asking for a `wake` frame (1), or taking what
    /// came (0). The sleeper is still woken: by the wake frame the supervisor then sends, by a
    /// wake, and by the stop (adversary, stop 72: a process's thread stayed asleep for good).
    @Test func aSleeperWhoseFlagAnotherReceiveOverwroteIsStillWoken() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        let api = host.api

        // Overwritten with 1 (the other receive found nothing and asked for a frame); the
        // publish then asks for the frame, which the reader thread handles.
        let framed = Waiter(host)
        #expect(framed.awaitAsleep(), "the wait never slept")
        #expect(Self.take(host) == nil)
        #expect(producerRing.consumerWaits && !producerRing.consumerSleeps, "the other receive raised the flag for a frame")
        #expect(Self.publish(producerRing, payload: "framed"), "a flag of 1 asks for a wake frame")
        host.handle(.wake, UnsafeRawBufferPointer(start: nil, count: 0))
        try #require(framed.outcome() == Int32(AGENT_OK))
        #expect(Self.take(host) == "framed")

        // Lowered to 0 (the other receive took what came, which lowers it) while it sleeps:
        // a wake still ends the wait.
        let woken = Waiter(host)
        #expect(woken.awaitAsleep(), "the wait never slept")
        producerRing.cancelWait()
        api.wake_events_wait!(api.host_ctx)
        try #require(woken.outcome() == Int32(AGENT_TIMEOUT), "a wake did not reach a sleeper whose flag was lowered")

        // Overwritten with 1 again, and then the stop.
        let stopped = Waiter(host)
        #expect(stopped.awaitAsleep(), "the wait never slept")
        #expect(Self.take(host) == nil)
        host.requestStop()
        #expect(stopped.outcome() == Int32(AGENT_STOPPED))
    }

    /// Two threads of a C module asleep on the ring's word, one in `wait_events`, one blocked
    /// in `next_events`: the first, woken and gone, must not lower the word under the second,
    /// which the next publish must still wake (adversary, stop 72: a process stalled with
    /// thousands of events waiting, its threads deadlocked on the receive's lock).
    @Test func aWaitThatEndsLeavesTheWordRaisedForAnotherThreadAsleepOnIt() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        // The wait ends by its timeout, which wakes no one else: the receive sleeps on. The
        // timeout must outlast the start of the receive's thread and its sleep, however late a
        // loaded machine runs them (the check below refuses a test that came too late).
        let waiter = Waiter(host, timeoutMilliseconds: 10_000)
        #expect(waiter.awaitAsleep(), "the wait never slept")
        let blocked = Receiver(host)
        #expect(blocked.awaitAsleep(), "the blocking receive never slept")
        try #require(!waiter.hasReturned, "the wait's timeout came before the receive slept: nothing was tested")
        try #require(waiter.outcome() == Int32(AGENT_TIMEOUT))
        #expect(blocked.awaitAsleep(), "the blocking receive is no longer asleep")
        #expect(!Self.publish(producerRing, payload: "second"), "the word still says a thread sleeps on it")
        #expect(blocked.received() == "second")
    }

    /// A module's thread blocked in `next_events` (a C module, a jsonl/1 program's bridge, the
    /// chatbot) sleeps on the ring's word too: the publish wakes it, and its timeout holds.
    @Test func aBlockingReceiveIsWokenByThePublishItselfAndItsTimeoutHolds() throws {
        let (host, producer, fds) = try Self.host()
        defer { close(fds[0]); close(fds[1]) }
        let producerRing = try #require(producer)
        let received = LockedValue<String?>(nil)
        let receiver = Thread {
            var event = agent_event()
            var count = 0
            let api = host.api
            if api.next_events!(api.host_ctx, -1, &event, 1, &count) == AGENT_OK, count == 1 {
                let text = String(decoding: DeliveryRunTests.payload(event), as: UTF8.self)
                received.withLock { $0 = text }
            }
        }
        receiver.start()
        #expect(Self.awaitSleeper(producerRing), "the receive never slept on the ring's word")
        #expect(!Self.publish(producerRing, payload: "blocked"), "a sleeper on the ring's word needs no wake frame")
        let deadline = Date().addingTimeInterval(30)
        while received.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
        #expect(received.withLock { $0 } == "blocked")

        var event = agent_event()
        var count = 0
        let api = host.api
        let start = Date()
        #expect(api.next_events!(api.host_ctx, 100, &event, 1, &count) == Int32(AGENT_TIMEOUT))
        #expect(Date().timeIntervalSince(start) >= 0.09, "the receive returned before its timeout")
        #expect(!producerRing.consumerWaits, "a receive that timed out leaves no flag")
    }

    @Test func withoutARingTheWaitEndsForSocketDeliveriesAWakeAndItsTimeout() throws {
        let (host, _, fds) = try Self.host(ring: false)
        defer { close(fds[0]); close(fds[1]) }
        let api = host.api
        #expect(api.wait_events!(api.host_ctx, 50) == Int32(AGENT_TIMEOUT))
        let waiter = Waiter(host)
        Self.deliverOnSocket(host, payload: "sock")
        try #require(waiter.outcome() == Int32(AGENT_OK))
        #expect(Self.take(host) == "sock")
        let woken = Waiter(host)
        // Whether the wake comes before the wait or during it, the wait returns.
        api.wake_events_wait!(api.host_ctx)
        #expect(woken.outcome() == Int32(AGENT_TIMEOUT))
    }
}
