@testable import AgentOutputs
import AgentTestSupport
import JSONSchema

/// Records to publish in the output tests.
extension OutputTestSupport {
    /// Event number `n` of a test stream: type `tick`, payload `{"n": n}`.
    static func event(_ n: Int, source: String = "ticker") -> OutputRecord {
        .event(source: source, type: "tick", payload: Array("{\"n\":\(n)}".utf8), time: 1_795_402_800_000_000_000 + Int64(n) * 1_000_000)
    }

    /// The `payload.n` of each record (parsed JSON objects).
    static func numbers(_ records: [JSONValue]) -> [Int] {
        records.compactMap { $0["payload"]?["n"]?.numberValue?.intValue }
    }
}
