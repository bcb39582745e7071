import Foundation
import Hummingbird

/// An `application/x-www-form-urlencoded` body, as the dashboard's forms send it.
struct FormBody: Sendable {
    var fields: [String: String] = [:]

    subscript(_ name: String) -> String? { fields[name] }

    init(_ text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(parts[0])
            // The first value of a repeated field wins.
            if fields[name] == nil { fields[name] = parts.count > 1 ? Self.decode(parts[1]) : "" }
        }
    }

    static func decode(_ part: Substring) -> String {
        let spaced = part.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Reads the body of `request`, at most `limit` bytes.
    static func read(_ request: Request, limit: Int) async throws -> FormBody {
        let buffer = try await request.body.collect(upTo: limit)
        return FormBody(String(buffer: buffer))
    }
}
