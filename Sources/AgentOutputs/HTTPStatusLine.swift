/// Finds the final status code at the start of an HTTP/1.x response, skipping interim
/// (1xx) responses.
package enum HTTPStatusLine: Equatable {
    case incomplete
    case status(Int)
    case malformed(String)

    package static func parse(_ bytes: [UInt8]) -> HTTPStatusLine {
        var start = 0
        while true {
            guard let end = headerEnd(bytes, from: start) else { return .incomplete }
            let lineEnd = bytes[start..<end].firstIndex(of: 13) ?? end
            let line = String(decoding: bytes[start..<lineEnd], as: UTF8.self)
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]) else {
                return .malformed(String(line.prefix(100)))
            }
            if code >= 200 || code < 100 { return .status(code) }
            start = end + 4
        }
    }

    /// The index of the `\r\n\r\n` that ends a header block starting at `from`.
    private static func headerEnd(_ bytes: [UInt8], from: Int) -> Int? {
        guard bytes.count >= from + 4 else { return nil }
        var index = from
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }
}
