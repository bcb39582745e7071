import Foundation

/// A TCP socket listening on 127.0.0.1 at a port the kernel picked: a test's server, or a
/// service that takes connections and never answers (nothing accepts them).
package struct LoopbackListener {
    package let fd: Int32
    package let port: Int

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Binds and (with `backlog`) listens; nil backlog: only bound, to learn a free port.
    package init(backlog: Int32? = 16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, backlog.map({ listen(fd, $0) == 0 }) ?? true else {
            let problem = String(cString: strerror(errno))
            Glibc.close(fd)
            throw Failure(description: "bind/listen on 127.0.0.1: \(problem)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    package func close() { _ = Glibc.close(fd) }
}
