import Foundation
import GRDBSQLite
import JSONSchema

/// The run an event is about, for the events' `run_id` column (`events --run`): its payload's
/// top-level `run_id` (the task and workflow events carry one). Found on the store's writer
/// thread, never the loop: a byte search first, so that the many events without one cost a
/// scan of their payload and nothing more; a payload over ``largest`` bytes is not parsed.
enum EventRunID {
    /// Payloads longer than this are not looked into (an event about a run is small).
    static let largest = 64 << 10
    /// Run ids longer than this are not indexed (no run id of the runtime is near it).
    static let longestID = 512

    /// SQLite copies the text (the binding outlives the Swift string's buffer).
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static let key = Array(#""run_id""#.utf8)

    static func of(_ payload: UnsafeRawBufferPointer) -> String? {
        guard payload.count >= key.count, payload.count <= largest, let base = payload.baseAddress, contains(payload) else { return nil }
        guard let value = try? JSONValue.parse(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: payload.count)),
              let id = value["run_id"]?.stringValue, !id.isEmpty, id.utf8.count <= longestID else { return nil }
        return id
    }

    /// Whether the payload holds `"run_id"`: memchr to each `"`, then a compare.
    private static func contains(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let base = payload.baseAddress else { return false }
        var offset = 0
        let last = payload.count - key.count
        while offset <= last, let quote = memchr(base + offset, Int32(UInt8(ascii: "\"")), last - offset + 1) {
            let at = base.distance(to: UnsafeRawPointer(quote))
            if key.withUnsafeBytes({ memcmp(base + at, $0.baseAddress!, key.count) }) == 0 { return true }
            offset = at + 1
        }
        return false
    }
}
