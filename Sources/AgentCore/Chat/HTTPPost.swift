import Foundation

/// One blocking HTTP/1.1 POST of JSON for the chatbot's `rest` adapter (see ``HTTPExchange``):
/// at most 1 MiB of answer.
enum HTTPPost {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func send(url: URL, body: [UInt8], timeout: Double) -> Result<(Int, [UInt8]), Failure> {
        HTTPExchange(url: url, body: body, timeout: timeout, maximumBytes: 1 << 20).send()
            .map { ($0.status, $0.body) }
            .mapError { Failure(description: $0.description) }
    }
}
