import Foundation

/// A tiny HTTP server on 127.0.0.1 (ephemeral port) that answers every request with one HTML
/// page: a second origin for browser tests (a page of another site that tries to post to the
/// dashboard).
package final class StaticPageServer: @unchecked Sendable {
    package let port: Int
    private let listener: Int32
    private let html: String
    private let lock = NSLock()
    private var running = true

    package init(html: String) throws {
        self.html = html
        let bound: LoopbackListener
        do { bound = try LoopbackListener() } catch { throw WebDriver.Failure(description: "\(error)") }
        listener = bound.fd
        port = bound.port
        let server = self
        Thread.detachNewThread { server.serve() }
    }

    private func serve() {
        while lock.withLock({ running }) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            while request.count < 65536 {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { break }
                request += buffer[0..<count]
                if String(decoding: request, as: UTF8.self).contains("\r\n\r\n") { break }
            }
            let body = Array(html.utf8)
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            let answer = Array(head.utf8) + body
            _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            close(connection)
        }
    }

    /// Stops accepting (the listening socket is shut down, which ends the accept).
    package func stop() {
        let wasRunning = lock.withLock { defer { running = false }; return running }
        guard wasRunning else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }
}
