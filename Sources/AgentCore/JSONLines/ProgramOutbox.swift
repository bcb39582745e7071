import Glibc

/// Lines waiting for a program's stdin, written only as fast as the program reads them: the
/// writer never blocks (the descriptor is non-blocking). Lines the program must get (its
/// `start`, a chat message, `stop`) go ahead of the events it subscribed to; events past
/// ``eventLimit`` bytes are dropped oldest first and counted. A logic adapter that read its
/// events slowly held its chatbot's only thread in a write, and every chat timed out for
/// minutes after a flood.
struct ProgramOutbox {
    /// Lines that are never dropped, in order.
    private var urgent: [[UInt8]] = []
    /// Event lines, oldest at `eventsHead`.
    private var events: [[UInt8]] = []
    private var eventsHead = 0
    /// Bytes of event lines queued (not yet in `pending`).
    private(set) var eventBytes = 0
    /// What is being written, from `offset` on: whole lines, no longer reordered or dropped.
    private var pending: [UInt8] = []
    private var offset = 0
    /// Event lines dropped since the last ``takeDropped()``.
    private(set) var dropped = 0
    /// The most bytes of events kept waiting; past it the oldest go.
    let eventLimit: Int

    /// How much is taken into one write.
    static let writeSize = 64 << 10

    init(eventLimit: Int = 1 << 20) { self.eventLimit = eventLimit }

    /// Nothing is waiting to be written.
    var isEmpty: Bool { offset == pending.count && urgent.isEmpty && eventsHead == events.count }

    /// A line the program must get: written after the line being written, before any event.
    mutating func send(_ line: [UInt8]) { urgent.append(line) }

    /// An event line: dropped (with the oldest others) when more than ``eventLimit`` bytes of
    /// events wait.
    mutating func offer(_ line: [UInt8]) {
        events.append(line)
        eventBytes += line.count
        while eventBytes > eventLimit, eventsHead < events.count {
            eventBytes -= events[eventsHead].count
            events[eventsHead] = []
            eventsHead += 1
            dropped += 1
        }
        if eventsHead > 1024, eventsHead * 2 > events.count {
            events.removeFirst(eventsHead)
            eventsHead = 0
        }
    }

    /// Event lines dropped since the last call.
    mutating func takeDropped() -> Int {
        defer { dropped = 0 }
        return dropped
    }

    /// How a flush ended.
    enum Flush {
        /// Everything is written.
        case done
        /// The program reads no more for now; flush again when its stdin is writable.
        case waiting
        /// Its stdin is closed (the program has gone).
        case closed
    }

    /// Writes what the program takes without waiting.
    mutating func flush(to fd: Int32) -> Flush {
        while true {
            if offset == pending.count, !refill() { return .done }
            let n = pending.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? .waiting : .closed
            }
            offset += n
        }
    }

    /// Forgets everything waiting (the program is gone; a new one starts afresh).
    mutating func reset() {
        self = ProgramOutbox(eventLimit: eventLimit)
    }

    /// Moves the next lines into `pending`: every urgent one, then events up to a write's size.
    private mutating func refill() -> Bool {
        pending.removeAll(keepingCapacity: true)
        offset = 0
        for line in urgent { pending += line }
        urgent.removeAll(keepingCapacity: true)
        while eventsHead < events.count, pending.count < Self.writeSize {
            pending += events[eventsHead]
            eventBytes -= events[eventsHead].count
            events[eventsHead] = []
            eventsHead += 1
        }
        if eventsHead == events.count {
            events.removeAll(keepingCapacity: true)
            eventsHead = 0
        }
        return !pending.isEmpty
    }
}
