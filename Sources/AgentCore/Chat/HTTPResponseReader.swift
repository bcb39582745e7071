/// An HTTP/1.1 response read as its bytes arrive: the head, then the body sent with
/// Content-Length, chunked, or until the connection ends; each piece of the decoded body goes
/// to a callback (a server-sent event stream) or is kept.
struct HTTPResponseReader {
    struct Problem: Error, CustomStringConvertible { var description: String }

    private enum Body { case head, length(Int), chunkSize, chunkData(Int), chunkEnd, untilClose, done }

    let maximumBytes: Int
    private(set) var status = 0
    /// The body, when no callback took it.
    private(set) var body: [UInt8] = []
    private var pending: [UInt8] = []
    private var state = Body.head
    private var received = 0

    init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

    /// Takes the next bytes (`ended`: the connection closed); true once the response is whole.
    mutating func feed(_ bytes: [UInt8], ended: Bool, onBody: (([UInt8]) -> Void)?) throws -> Bool {
        received += bytes.count
        guard received <= maximumBytes else { throw Problem(description: "the answer is larger than \(maximumBytes >> 20) MiB") }
        pending += bytes
        while true {
            switch state {
            case .head:
                guard let end = Self.find([13, 10, 13, 10], in: pending) else {
                    if ended { throw Problem(description: "the answer is not HTTP") }
                    return false
                }
                try readHead(Array(pending[..<end]))
                pending.removeFirst(end + 4)
            case .length(let left):
                let taken = min(left, pending.count)
                emit(Array(pending.prefix(taken)), onBody)
                pending.removeFirst(taken)
                state = left == taken ? .done : .length(left - taken)
                if case .length = state {
                    if ended { throw Problem(description: "the answer ended \(left - taken) bytes before its Content-Length") }
                    return false
                }
            case .chunkSize:
                guard let end = Self.find([13, 10], in: pending) else {
                    if ended || pending.count > 1024 { throw Problem(description: "the answer's chunked body is malformed (no chunk size)") }
                    return false
                }
                let line = String(decoding: pending[..<end], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(line.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                    throw Problem(description: "the answer's chunked body is malformed (chunk size \"\(line.prefix(20))\")")
                }
                pending.removeFirst(end + 2)
                state = size == 0 ? .done : .chunkData(size)
            case .chunkData(let left):
                let taken = min(left, pending.count)
                emit(Array(pending.prefix(taken)), onBody)
                pending.removeFirst(taken)
                state = left == taken ? .chunkEnd : .chunkData(left - taken)
                if case .chunkData = state {
                    if ended { throw Problem(description: "the answer ended in the middle of a chunk") }
                    return false
                }
            case .chunkEnd:
                guard pending.count >= 2 else {
                    if ended { throw Problem(description: "the answer ended in the middle of a chunk") }
                    return false
                }
                pending.removeFirst(2)
                state = .chunkSize
            case .untilClose:
                emit(pending, onBody)
                pending = []
                return ended
            case .done:
                return true
            }
        }
    }

    private mutating func readHead(_ bytes: [UInt8]) throws {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = lines.first, first.hasPrefix("HTTP/"), let code = Int(first.split(separator: " ").dropFirst().first ?? "") else {
            throw Problem(description: "the answer is not HTTP")
        }
        status = code
        var length: Int?
        var chunked = false
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            switch parts[0].lowercased() {
            case "content-length": length = Int(value)
            case "transfer-encoding": chunked = value.lowercased().contains("chunked")
            default: break
            }
        }
        if chunked {
            state = .chunkSize
        } else if let length, length >= 0 {
            state = length == 0 ? .done : .length(length)
        } else {
            state = .untilClose
        }
    }

    private mutating func emit(_ bytes: [UInt8], _ onBody: (([UInt8]) -> Void)?) {
        guard !bytes.isEmpty else { return }
        if let onBody { onBody(bytes) } else { body += bytes }
    }

    /// Where `needle` starts in `bytes`.
    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var index = 0
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
