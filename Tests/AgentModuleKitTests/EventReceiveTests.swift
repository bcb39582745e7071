import AgentModuleABI
import AgentTestSupport
import Foundation
import Testing
@testable import AgentModuleKit

/// How a process receives events from its host, with a host that offers the event notifier
/// (the task is resumed by the host's thread) and with one that predates it (a thread blocks in
/// `next_event`). The host here is a stand-in: these tests are about the SDK's side of the
/// callback table.
@Suite(.ownThreads) struct EventReceiveTests {
    /// A host with a queue of events, filled from a thread of the test.
    final class QueueHost: @unchecked Sendable {
        let lock = NSCondition()
        var queue: [[UInt8]] = []
        var stopped = false
        var notify: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
        var notifyArgument: UnsafeMutableRawPointer?
        /// `next_event` calls that were allowed to block.
        var blockingCalls = 0
        /// The strings behind the last events handed out.
        let type = strdup("n")!
        let source = strdup("producer")!
        var payloads: [[UInt8]] = []
        /// Calls of next_events and the events they returned.
        var batchCalls = 0
        var batchedEvents = 0

        deinit {
            free(type)
            free(source)
        }

        static func from(_ context: UnsafeMutableRawPointer?) -> QueueHost {
            Unmanaged<QueueHost>.fromOpaque(context!).takeUnretainedValue()
        }

        func deliver(_ payload: [UInt8]) {
            lock.lock()
            queue.append(payload)
            let notify = queue.count == 1 ? self.notify : nil
            let argument = notifyArgument
            lock.broadcast()
            lock.unlock()
            notify?(argument)
        }

        func stop() {
            lock.lock()
            stopped = true
            let notify = self.notify
            let argument = notifyArgument
            lock.broadcast()
            lock.unlock()
            notify?(argument)
        }

        func next(timeout: Int64, into out: UnsafeMutablePointer<agent_event>, capacity: Int = 1, count: inout Int) -> Int32 {
            lock.lock()
            defer { lock.unlock() }
            if timeout != 0 { blockingCalls += 1 }
            let deadline = Date().addingTimeInterval(timeout < 0 ? 3600 : Double(timeout) / 1000)
            while queue.isEmpty, !stopped {
                if timeout == 0 || !lock.wait(until: deadline) { break }
            }
            if queue.isEmpty { return Int32(stopped ? AGENT_STOPPED : AGENT_TIMEOUT) }
            count = EventReceiveTests.handOut(from: &queue, capacity: capacity, keeping: &payloads, type: type, source: source, into: out)
            return Int32(AGENT_OK)
        }

        /// The callback table; `notifier: false` is a host whose struct ends before
        /// `set_event_notifier` (and `next_events`).
        func api(notifier: Bool) -> UnsafeMutablePointer<agent_host_api> {
            let api = UnsafeMutablePointer<agent_host_api>.allocate(capacity: 1)
            api.initialize(to: agent_host_api())
            api.pointee.abi_version = AGENT_MODULE_ABI_VERSION
            api.pointee.struct_size = UInt32(notifier ? MemoryLayout<agent_host_api>.size : MemoryLayout<agent_host_api>.offset(of: \.set_event_notifier)!)
            api.pointee.host_ctx = Unmanaged.passUnretained(self).toOpaque()
            api.pointee.next_event = { context, timeout, out in
                var count = 0
                return QueueHost.from(context).next(timeout: timeout, into: out!, count: &count)
            }
            api.pointee.next_events = { context, timeout, out, capacity, count in
                let host = QueueHost.from(context)
                let status = host.next(timeout: timeout, into: out!, capacity: capacity, count: &count!.pointee)
                host.batchCalls += 1
                host.batchedEvents += status == AGENT_OK ? count!.pointee : 0
                return status
            }
            api.pointee.stop_requested = { context in
                let host = QueueHost.from(context)
                return host.lock.withLock { host.stopped ? 1 : 0 }
            }
            api.pointee.set_event_notifier = { context, notify, argument in
                let host = QueueHost.from(context)
                host.lock.withLock {
                    host.notify = notify
                    host.notifyArgument = argument
                }
            }
            return api
        }
    }

    /// Moves up to `capacity` payloads from the front of `queue` into `payloads` (whose arrays
    /// must stay put while they are read) and fills `out` with their events, of type `type`
    /// ("n") from `source` ("producer"), as a stand-in host hands them out; returns how many.
    static func handOut(from queue: inout [[UInt8]], capacity: Int, keeping payloads: inout [[UInt8]],
                        type: UnsafeMutablePointer<CChar>, source: UnsafeMutablePointer<CChar>,
                        into out: UnsafeMutablePointer<agent_event>) -> Int {
        payloads = Array(queue.prefix(capacity))
        queue.removeFirst(payloads.count)
        for (index, payload) in payloads.enumerated() {
            out[index] = payload.withUnsafeBufferPointer {
                agent_event(type: type, type_len: 1, source: source, source_len: 8, time_ns: 0,
                            payload: $0.baseAddress, payload_len: $0.count)
            }
        }
        return payloads.count
    }

    @Test(arguments: [true, false])
    func eventsArriveInOrderInBurstsAndOneByOneThenTheSequenceEndsAtStop(notifier: Bool) async throws {
        let host = QueueHost()
        let api = host.api(notifier: notifier)
        defer { api.deallocate() }
        let context = ProcessContext(processName: "sink", processType: "test", host: HostBridge(api))
        context.startEventNotifications()
        defer { context.stopEventNotifications() }
        let producer = Thread {
            for index in 0..<300 {
                host.deliver(Array(String(index).utf8))
                // Bursts (taken as batches) and pauses (the receiver waits in between).
                if index % 50 == 49 { usleep(5_000) }
                if index >= 280 { usleep(1_000) }
            }
            usleep(5_000)
            host.stop()
        }
        producer.start()
        var received: [String] = []
        for await event in context.events {
            #expect(event.type == "n" && event.source == "producer")
            received.append(String(decoding: event.payload, as: UTF8.self))
        }
        #expect(received == (0..<300).map(String.init))
        let blocking = host.lock.withLock { host.blockingCalls }
        let (calls, batched) = host.lock.withLock { (host.batchCalls, host.batchedEvents) }
        if notifier {
            #expect(blocking == 0, "with the notifier no thread should block in next_event")
            #expect(batched == 300 && calls < 300, "\(calls) next_events calls for \(batched) events")
        } else {
            #expect(blocking > 0)
            #expect(calls == 0, "next_events is past this host's struct_size")
        }
    }

    @Test(arguments: [Int64(0), 1_795_458_813_241_476_577, 978_307_200_000_000_000, -1_000_000_123])
    func anEventsTimeIsTheHostsStampExactlyAndItsDateWithinAMicrosecond(nanoseconds: Int64) {
        let event = Event(type: "t", source: "s", timeNanoseconds: nanoseconds, payload: EventPayload([]))
        #expect(event.timeNanoseconds == nanoseconds)
        let back = (event.time.timeIntervalSinceReferenceDate * 1e9).rounded() + 978_307_200e9
        #expect(abs(back - Double(nanoseconds)) < 1000, "\(nanoseconds) ns became \(event.time.timeIntervalSince1970) s")
    }

    @Test func everyStampAnInt64HoldsHasItsOwnDay() {
        #expect(abs(Event.date(nanoseconds: .min).timeIntervalSince1970 + 9_223_372_036.854_775_808) < 1e-5)
        #expect(abs(Event.date(nanoseconds: .max).timeIntervalSince1970 - 9_223_372_036.854_775_807) < 1e-5)
        #expect(Event.date(nanoseconds: -1_500_000_000).timeIntervalSince1970 == -1.5)
    }

    @Test func anEventMadeWithADateKeepsWhatTheDateHoldsAndSaturatesBeyondInt64() {
        let made = Event(type: "t", source: "s", time: Date(timeIntervalSince1970: 1_795_458_813.25), payload: [])
        #expect(made.timeNanoseconds == 1_795_458_813_250_000_000)
        #expect(Event(type: "t", source: "s", time: .distantFuture, payload: []).timeNanoseconds == .max)
        #expect(Event(type: "t", source: "s", time: .distantPast, payload: []).timeNanoseconds == .min)
        #expect(Event(type: "t", source: "s", time: Date(timeIntervalSince1970: .nan), payload: []).timeNanoseconds == 0)
        #expect(Event(type: "t", source: "s", time: Date(timeIntervalSince1970: 9.3e9), payload: []).timeNanoseconds == .max)
        #expect(Event(type: "t", source: "s", time: Date(timeIntervalSince1970: -0.5), payload: []).timeNanoseconds == -500_000_000)
        #expect(Event(type: "t", source: "s", time: Date(timeIntervalSinceReferenceDate: 500e-9), payload: []).timeNanoseconds == 978_307_200_000_000_500)
    }

    /// A module's test that makes an event with a `Date` reads the same `Date` back: whole
    /// seconds, and any date more than 98 days from 2001 (where a `Date` is twice as coarse as
    /// a nanosecond or more), before 1970 too.
    @Test func anEventsDateIsTheDateItWasMadeWith() {
        for second in -1_000...1_000 {
            let date = Date(timeIntervalSince1970: Double(second))
            #expect(Event(type: "t", source: "s", time: date, payload: []).time == date, "\(second) s")
        }
        var generator = SystemRandomNumberGenerator()
        var differing: [Double] = []
        for _ in 0..<20_000 {
            var since = Double.random(in: 8_400_000...2_000_000_000, using: &generator)
            if Bool.random(using: &generator) { since = -since }
            let date = Date(timeIntervalSinceReferenceDate: since)
            if Event(type: "t", source: "s", time: date, payload: []).time != date { differing.append(since) }
        }
        #expect(differing.isEmpty, "\(differing.count) dates came back otherwise, e.g. \(differing.prefix(3)) s after 2001")
        let now = Date()
        #expect(Event(type: "t", source: "s", time: now, payload: []).time == now)
    }

    /// A host that hands out names at fixed places: the SDK may know a name by its place within
    /// one call, but never one of another length at the same place.
    @Test func aNameAtThePlaceOfTheLastOneIsKnownByItsLengthToo() async throws {
        let names = strdup("tick tock")!
        defer { free(names) }
        let api = UnsafeMutablePointer<agent_host_api>.allocate(capacity: 1)
        defer { api.deallocate() }
        api.initialize(to: agent_host_api())
        api.pointee.abi_version = AGENT_MODULE_ABI_VERSION
        api.pointee.struct_size = UInt32(MemoryLayout<agent_host_api>.size)
        api.pointee.host_ctx = UnsafeMutableRawPointer(names)
        api.pointee.next_events = { context, _, out, capacity, count in
            let place = UnsafePointer(context!.assumingMemoryBound(to: CChar.self))
            // One call: "tick", "tick" at the same place, then "tick tock" from that place.
            let lengths = [4, 4, 9]
            for (index, length) in lengths.enumerated() where index < capacity {
                out![index] = agent_event(type: place, type_len: length, source: place, source_len: 4, time_ns: 0, payload: nil, payload_len: 0)
            }
            count!.pointee = min(capacity, lengths.count)
            return Int32(AGENT_OK)
        }
        let bridge = HostBridge(api)
        guard case .events(let batch) = bridge.nextEvents(timeoutMilliseconds: 0, limit: 16) else {
            Issue.record("no batch")
            return
        }
        let types = batch.takeRest().map(\.type)
        #expect(types == ["tick", "tick", "tick tock"])
    }

    private func makeContext(_ host: QueueHost, notifier: Bool = true) -> (ProcessContext, UnsafeMutablePointer<agent_host_api>) {
        let api = host.api(notifier: notifier)
        let context = ProcessContext(processName: "sink", processType: "test", host: HostBridge(api))
        context.startEventNotifications()
        return (context, api)
    }

    @Test func eventsAnIteratorTookButDidNotServeGoBackWhenItIsLeft() async throws {
        let host = QueueHost()
        let (context, api) = makeContext(host)
        defer {
            context.stopEventNotifications()
            api.deallocate()
        }
        for index in 0..<10 { host.deliver(Array(String(index).utf8)) }
        var first: [String] = []
        for await event in context.events {
            first.append(String(decoding: event.payload, as: UTF8.self))
            if first.count == 3 { break }
        }
        #expect(first == ["0", "1", "2"])
        var rest: [String] = []
        while rest.count < 7, let event = await context.nextEvent() { rest.append(String(decoding: event.payload, as: UTF8.self)) }
        #expect(rest == (3..<10).map(String.init))
    }

    @Test func twoReceivesAtOnceBothGetEventsAndBothEndAtStop() async throws {
        let host = QueueHost()
        let (context, api) = makeContext(host)
        defer {
            context.stopEventNotifications()
            api.deallocate()
        }
        let producer = Thread {
            usleep(20_000)
            host.deliver(Array("x".utf8))
            host.deliver(Array("y".utf8))
        }
        producer.start()
        async let a = context.nextEvent()
        async let b = context.nextEvent()
        let received = await [a, b].compactMap { $0.map { String(decoding: $0.payload, as: UTF8.self) } }
        #expect(Set(received) == ["x", "y"])
        let stopper = Thread {
            usleep(20_000)
            host.stop()
        }
        stopper.start()
        async let c = context.nextEvent()
        async let d = context.nextEvent()
        let ended = await [c, d]
        #expect(ended.allSatisfy { $0 == nil })
    }
}
