import Glibc

/// Writes to a descriptor that may take a write in pieces (a pipe, a terminal, a socket).
package enum DescriptorWrite {
    /// Writes all of `bytes`, waiting while the reader is slow, again after EINTR. False when
    /// the descriptor refused the rest (the reader gone, the descriptor closed). A descriptor
    /// someone else made non-blocking (a terminal shared with a program that set O_NONBLOCK)
    /// is waited for as a blocking one would be, not given up at its first EAGAIN.
    @discardableResult
    package static func all(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var at = 0
        while at < bytes.count {
            let n = write(fd, bytes.baseAddress! + at, bytes.count - at)
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&writable, 1, -1) >= 0 || errno == EINTR else { return false }
                continue
            }
            guard n > 0 else { return false }
            at += n
        }
        return true
    }
}
