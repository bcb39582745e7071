import Glibc

/// Writes to a descriptor that may take a write in pieces (a pipe, a terminal, a socket).
package enum DescriptorWrite {
    /// Writes all of `bytes`, waiting while the reader is slow, again after EINTR. False when
    /// the descriptor refused the rest (the reader gone, the descriptor closed).
    @discardableResult
    package static func all(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var at = 0
        while at < bytes.count {
            let n = write(fd, bytes.baseAddress! + at, bytes.count - at)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            at += n
        }
        return true
    }
}
