import Glibc

/// Reads newline-delimited lines from a file descriptor with a fixed buffer: a line longer
/// than `limit` bytes is never buffered whole — its bytes are skipped up to its newline and
/// it is reported as too long. Memory stays at `limit` plus one read, whatever the writer
/// sends.
public struct JSONLinesReader {
    /// What one read produced, in order.
    public enum Item {
        /// A complete line, without its newline (valid only during the callback).
        case line(UnsafeRawBufferPointer)
        /// A line longer than the limit, skipped; reported once, as soon as it is known to be
        /// too long: `whole` when its newline was read with it (`length` is then its length),
        /// else `length` is what was read so far and the rest, up to its newline, is skipped
        /// unreported (a writer that never ends its line is told of at once, not never).
        /// `head`: its first bytes, up to ``headBytes`` (valid only during the callback).
        case tooLong(length: Int, whole: Bool, head: UnsafeRawBufferPointer)
    }

    public let fd: Int32
    /// The longest line accepted, in bytes (newline not counted).
    public let limit: Int
    private var buffer: UnsafeMutableRawBufferPointer
    /// Bytes [start, end) of the buffer are read and not yet handed out.
    private var start = 0
    private var end = 0
    /// The length so far of a line being skipped (nil: not skipping).
    private var skipped: Int?

    /// How much of a line too long a ``Item/tooLong`` shows (what names it: a run's id).
    public static let headBytes = 4096

    /// The first bytes of the line in [start, to).
    private func head(to: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[start..<min(to, start + Self.headBytes)])
    }

    /// The read size: lines shorter than this come many to a read.
    public static let chunk = 64 << 10

    public init(fd: Int32, limit: Int) {
        self.fd = fd
        self.limit = max(1, limit)
        buffer = .allocate(byteCount: self.limit + 1 + Self.chunk, alignment: 8)
    }

    /// Frees the buffer (the reader is not used after).
    public mutating func deallocate() {
        buffer.deallocate()
        buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    /// Reads once (blocking) and hands out every complete line it made. False at the end of
    /// the file or an error other than EINTR; a last line without a newline is handed out
    /// then.
    public mutating func read(_ handle: (Item) -> Void) -> Bool {
        if start > 0, buffer.count - end < Self.chunk {
            // Move what is left of a partial line to the front.
            if end > start { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start) }
            end -= start
            start = 0
        }
        var n: Int
        repeat {
            n = Glibc.read(fd, buffer.baseAddress! + end, buffer.count - end)
        } while n < 0 && errno == EINTR
        guard n > 0 else {
            if skipped != nil {
                // Reported when the skipping began.
            } else if end > start {
                handle(.line(UnsafeRawBufferPointer(rebasing: buffer[start..<end])))
            }
            start = 0
            end = 0
            skipped = nil
            return false
        }
        let scanFrom = end
        end += n
        split(from: scanFrom, handle)
        return true
    }

    /// Hands out the lines ending in [from, end), and skips what an over-long line left.
    private mutating func split(from: Int, _ handle: (Item) -> Void) {
        var at = from
        while at < end {
            guard let found = memchr(buffer.baseAddress! + at, 0x0A, end - at) else { break }
            let newline = buffer.baseAddress!.distance(to: found)
            if skipped != nil {
                skipped = nil
            } else if newline - start > limit {
                handle(.tooLong(length: newline - start, whole: true, head: head(to: newline)))
            } else {
                handle(.line(UnsafeRawBufferPointer(rebasing: buffer[start..<newline])))
            }
            start = newline + 1
            at = start
        }
        // No newline in sight: a line longer than the limit is dropped as it comes.
        if end - start > limit || (skipped != nil && end > start) {
            if skipped == nil { handle(.tooLong(length: end - start, whole: false, head: head(to: end))) }
            skipped = (skipped ?? 0) + end - start
            start = 0
            end = 0
        }
        if start == end {
            start = 0
            end = 0
        }
    }
}
