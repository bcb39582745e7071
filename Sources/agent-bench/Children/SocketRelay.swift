import Foundation

/// The middle process of figure 4's two-hop baseline: whatever arrives on its socket from the
/// bench (fd 3) it writes, unparsed and at once, to its socket to the receiver (fd 0). The
/// least a process between sender and receiver can do, so that the supervisor's hop can be
/// set against the hop itself: two wake-ups and two copies through the kernel, no routing.
enum SocketRelay {
    static func run(from input: Int32, to output: Int32) -> Int32 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n < 0 { return 1 }
            if n == 0 { return 0 }
            var offset = 0
            while offset < n {
                let written = send(output, buffer.baseAddress! + offset, n - offset, Int32(MSG_NOSIGNAL))
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return 1 }
                offset += written
            }
        }
    }
}
