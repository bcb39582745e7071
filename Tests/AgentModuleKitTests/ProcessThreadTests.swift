import AgentModuleABI
import AgentTestSupport
import Foundation
import Synchronization
import Testing
@testable import AgentModuleKit

/// What the probe below saw: the threads its code ran on, and the events it got.
private let probeThreads = Mutex<Set<pthread_t>>([])
private let probeEvents = Mutex<[String]>([])

/// A monitor whose code notes the thread it runs on: before and after a sleep (a timer's job
/// must reach the process's thread from another), and at each event.
private struct ThreadProbe: Monitor {
    struct Settings: SettingsDeclaration {}
    static let typeName = "thread_probe"
    static let description = "Notes the threads its code runs on."
    static let subscribes = ["n"]

    init(settings: Settings) {}

    func run(context: ProcessContext) async throws {
        probeThreads.withLock { _ = $0.insert(pthread_self()) }
        try await Task.sleep(nanoseconds: 2_000_000)
        probeThreads.withLock { _ = $0.insert(pthread_self()) }
        for await event in context.events {
            probeThreads.withLock { _ = $0.insert(pthread_self()) }
            let text = String(decoding: event.payload, as: UTF8.self)
            probeEvents.withLock { $0.append(text) }
        }
    }
}

/// How AgentModuleKit runs a process where the host offers `wait_events`: on the thread that
/// called `run_process`, which sleeps in the host when the process waits for events. The host
/// is a stand-in that never calls the event notifier (as a delivery on the ring wakes only the
/// sleeper): events can reach the process only through `wait_events`. The test is about the
/// SDK, the caller of the callback table.
@Suite(.ownThreads) struct ProcessThreadTests {
    final class WaitHost: @unchecked Sendable {
        let lock = NSCondition()
        var queue: [[UInt8]] = []
        var stopped = false
        var woken = false
        var waits = 0
        var stopHandler: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
        var stopArgument: UnsafeMutableRawPointer?
        var payloads: [[UInt8]] = []
        let type = strdup("n")!
        let source = strdup("producer")!

        deinit {
            free(type)
            free(source)
        }

        static func from(_ context: UnsafeMutableRawPointer?) -> WaitHost { Unmanaged<WaitHost>.fromOpaque(context!).takeUnretainedValue() }

        func deliver(_ text: String) {
            lock.withLock {
                queue.append(Array(text.utf8))
                lock.broadcast()
            }
        }

        func stop() {
            let (handler, argument) = lock.withLock { () -> ((@convention(c) (UnsafeMutableRawPointer?) -> Void)?, UnsafeMutableRawPointer?) in
                stopped = true
                lock.broadcast()
                return (stopHandler, stopArgument)
            }
            handler?(argument)
        }

        func wait(timeout: Int64) -> Int32 {
            lock.lock()
            defer { lock.unlock() }
            waits += 1
            let deadline = Date().addingTimeInterval(timeout < 0 ? 3600 : Double(timeout) / 1000)
            while queue.isEmpty, !stopped, !woken, lock.wait(until: deadline) {}
            if !queue.isEmpty { return Int32(AGENT_OK) }
            if stopped { return Int32(AGENT_STOPPED) }
            woken = false
            return Int32(AGENT_TIMEOUT)
        }

        func next(into out: UnsafeMutablePointer<agent_event>, capacity: Int, count: inout Int) -> Int32 {
            lock.lock()
            defer { lock.unlock() }
            if queue.isEmpty { return Int32(stopped ? AGENT_STOPPED : AGENT_TIMEOUT) }
            count = EventReceiveTests.handOut(from: &queue, capacity: capacity, keeping: &payloads, type: type, source: source, into: out)
            return Int32(AGENT_OK)
        }

        func api() -> UnsafeMutablePointer<agent_host_api> {
            let api = UnsafeMutablePointer<agent_host_api>.allocate(capacity: 1)
            api.initialize(to: agent_host_api())
            api.pointee.abi_version = AGENT_MODULE_ABI_VERSION
            api.pointee.struct_size = UInt32(MemoryLayout<agent_host_api>.size)
            api.pointee.host_ctx = Unmanaged.passUnretained(self).toOpaque()
            api.pointee.next_events = { context, _, out, capacity, count in
                WaitHost.from(context).next(into: out!, capacity: capacity, count: &count!.pointee)
            }
            api.pointee.stop_requested = { context in
                let host = WaitHost.from(context)
                return host.lock.withLock { host.stopped ? 1 : 0 }
            }
            api.pointee.set_stop_handler = { context, handler, argument in
                let host = WaitHost.from(context)
                let already = host.lock.withLock {
                    host.stopHandler = handler
                    host.stopArgument = argument
                    return host.stopped
                }
                if already { handler?(argument) }
            }
            // Registered, never called: the ring's publish wakes only the sleeper.
            api.pointee.set_event_notifier = { _, _, _ in }
            api.pointee.wait_events = { context, timeout in WaitHost.from(context).wait(timeout: timeout) }
            api.pointee.wake_events_wait = { context in
                let host = WaitHost.from(context)
                host.lock.withLock {
                    host.woken = true
                    host.lock.broadcast()
                }
            }
            return api
        }
    }

    @Test func theProcessRunsOnTheRunProcessThreadWhichSleepsInTheHostUntilEventsAndStopsAtTheStop() throws {
        let host = WaitHost()
        let outcome = Mutex<(thread: pthread_t, ok: Bool)?>(nil)
        let runner = Thread {
            let api = host.api()
            defer { api.deallocate() }
            let result = ProcessEntry(ThreadProbe.self).run(name: "probe", settings: [], host: UnsafePointer(api))
            let ok: Bool
            if case .success = result { ok = true } else { ok = false }
            outcome.withLock { $0 = (pthread_self(), ok) }
        }
        runner.start()
        let deadline = Date().addingTimeInterval(30)
        // Until the process waits in the host for events (past its sleep).
        while host.lock.withLock({ host.waits }) == 0, Date() < deadline { usleep(1_000) }
        for index in 0..<200 {
            host.deliver(String(index))
            if index % 40 == 39 { usleep(2_000) }
        }
        while probeEvents.withLock({ $0.count }) < 200, Date() < deadline { usleep(1_000) }
        host.stop()
        while outcome.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
        let ended = try #require(outcome.withLock { $0 }, "run_process did not return after the stop")
        #expect(ended.ok)
        #expect(probeEvents.withLock { $0 } == (0..<200).map(String.init))
        #expect(probeThreads.withLock { $0 } == [ended.thread], "the process's code ran off the run_process thread")
        #expect(host.lock.withLock { host.waits } >= 1)
    }
}
