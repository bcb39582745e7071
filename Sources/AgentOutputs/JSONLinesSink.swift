import Foundation

/// Writes records as JSON lines to a descriptor (stdout) or to a rotating file.
///
/// Lines are buffered and written when 64 KiB have gathered, when the queue runs empty, and
/// at least once a second under a steady stream, so a reader sees them promptly without one
/// write per record under load. Nothing is fsynced: the file is a log for people and tools,
/// and the event store is where durability lives.
package final class JSONLinesSink: OutputSink {
    package enum Target {
        case descriptor(Int32)
        case file(RotatingFile)
    }

    package let batchLimit = 1024
    package let linger = 0.0
    private let target: Target
    private let label: String
    private var buffer: [UInt8] = []
    private var bufferedRecords = 0
    private var lastFlush = OutputChannel.now()
    /// The failure last logged, so that a lasting problem is logged once, not per batch.
    private var loggedFailure: String?

    private static let flushSize = 64 << 10

    package init(target: Target, label: String) {
        self.target = target
        self.label = label
        buffer.reserveCapacity(Self.flushSize + 4096)
    }

    package func deliver(_ batch: [OutputRecord], channel: OutputChannel) {
        for (index, record) in batch.enumerated() {
            let line = Array((record.jsonLine() + "\n").utf8)
            if case .file(let file) = target {
                if file.descriptor < 0 {
                    do throws(RotatingFile.Failure) {
                        try file.open()
                    } catch {
                        fail(error.description, lost: batch.count - index, channel: channel)
                        return
                    }
                }
                if file.needsRotation(pending: buffer.count, adding: line.count) {
                    flush(channel: channel)
                    do throws(RotatingFile.Failure) {
                        try file.rotate()
                    } catch {
                        fail(error.description, lost: 0, channel: channel)
                        if file.descriptor < 0 {
                            channel.recordDropped(batch.count - index)
                            return
                        }
                    }
                }
            }
            buffer.append(contentsOf: line)
            bufferedRecords += 1
            if buffer.count >= Self.flushSize { flush(channel: channel) }
        }
        if OutputChannel.now() - lastFlush >= 1 { flush(channel: channel) }
    }

    package func flush(channel: OutputChannel) {
        lastFlush = OutputChannel.now()
        guard !buffer.isEmpty else { return }
        defer {
            buffer.removeAll(keepingCapacity: true)
            bufferedRecords = 0
        }
        let fd: Int32
        switch target {
        case .descriptor(let descriptor): fd = descriptor
        case .file(let file): fd = file.descriptor
        }
        guard fd >= 0 else {
            fail("not open", lost: bufferedRecords, channel: channel)
            return
        }
        if let problem = Self.writeAll(buffer, to: fd) {
            if case .file(let file) = target { file.close() }
            fail("write failed: \(problem)", lost: bufferedRecords, channel: channel)
            return
        }
        if case .file(let file) = target { file.size += buffer.count }
        channel.recordDelivered(bufferedRecords)
        if let failure = loggedFailure {
            channel.logger.notice("\(label): writing again (after: \(failure))")
            loggedFailure = nil
        }
    }

    package func close(channel: OutputChannel) {
        if case .file(let file) = target { file.close() }
    }

    private func fail(_ description: String, lost: Int, channel: OutputChannel) {
        channel.recordFailure(description)
        if lost > 0 { channel.recordDropped(lost) }
        if loggedFailure != description {
            channel.logger.error("\(label): \(description); \(lost) records dropped")
            loggedFailure = description
        }
    }

    /// Writes every byte, waiting on a non-blocking descriptor; returns the error, if any.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> String? {
        bytes.withUnsafeBytes { raw -> String? in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n >= 0 {
                    offset += n
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN:
                    var waiter = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&waiter, 1, 1000)
                default: return String(cString: strerror(errno))
                }
            }
            return nil
        }
    }
}
