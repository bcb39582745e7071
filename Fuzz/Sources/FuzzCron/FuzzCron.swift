@testable import AgentWork
import Foundation
@testable import AgentRuntime

/// The cron parser on arbitrary text, and the catch-up's arithmetic count of fire times
/// against a walk of them one by one. Input: `zone (1 byte) | window (3 bytes) | expression`;
/// the zone is one of a few with daylight saving (a 30-minute change among them), the window a
/// start near one of their changes and a width. Properties: a refusal names its field and
/// says why; a parsed expression reads back equal from its own text; where the walk finds
/// the window's fire times (at most `walked`), ``CronExpression/countFires`` counts as many and
/// ``ScheduleTiming/fireTimes`` gives the same count, first and newest times.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCron(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 4 else { return 0 }
    let text = String(decoding: input[4...], as: UTF8.self)
    let expression: CronExpression
    do {
        expression = try CronExpression(parsing: text)
    } catch {
        guard !error.field.isEmpty, !error.message.isEmpty else { fatalError("an unexplained refusal of \(text): \(error)") }
        return 0
    }
    guard (try? CronExpression(parsing: expression.text)) == expression else { fatalError("\(text) does not read back from \(expression.text)") }
    let zone = zones[Int(input[0]) % zones.count]
    // A start within a day of a change of the offset, in quarter seconds; a width up to ~3 days.
    let base = changes[Int(input[0]) / zones.count % changes.count]
    let after = base + (Double(Int(input[1]) << 4 | Int(input[2]) >> 4) - 2048) * 42.25
    let through = after + Double(Int(input[2]) & 15 << 8 | Int(input[3])) * Double(1 + Int(input[3]) % 64)
    guard let walked = walk(expression, after: after, through: through, in: zone) else { return 0 }
    var budget = 1_000_000
    let counted = expression.countFires(after: after, through: through, in: zone, budget: &budget)
    guard !counted.capped, counted.count == walked.count else {
        fatalError("\(expression) in \(zone.identifier), (\(after), \(through)]: counted \(counted), walked \(walked.count)")
    }
    let keep = Int(input[1]) % 5
    let due = ScheduleTiming.cron(expression).fireTimes(after: after, through: through, in: zone, keep: keep)
    guard due.count == walked.count, due.first == walked.first, due.newest == Array(walked.suffix(keep)), !due.capped else {
        fatalError("\(expression) in \(zone.identifier), (\(after), \(through)]: fireTimes \(due), walked \(walked.count) from \(walked.first ?? .nan)")
    }
    return 0
}

/// The fire times in (`after`, `through`] one by one, nil when there are more than `walked`.
func walk(_ expression: CronExpression, after: Double, through: Double, in zone: TimeZone) -> [Double]? {
    var times: [Double] = []
    var cursor = after
    while let next = expression.nextFire(after: Date(timeIntervalSince1970: cursor), in: zone)?.timeIntervalSince1970, next <= through {
        guard next > cursor else { fatalError("\(expression) in \(zone.identifier): the fire after \(cursor) is \(next)") }
        guard times.count < walked else { return nil }
        times.append(next)
        cursor = next
    }
    return times
}

let walked = 1_000
let zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata"].map { TimeZone(identifier: $0)! }
/// Instants near changes of those zones' offsets in 2026 (and one far from any).
let changes: [Double] = [1_774_746_000, 1_792_890_000, 1_772_953_200, 1_793_512_800, 1_775_314_800, 1_788_000_000, 1_767_225_600]
