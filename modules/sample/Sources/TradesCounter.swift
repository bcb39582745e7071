import AgentModuleKit
import Foundation

/// Answers "how many trades in the last 5 minutes?" from the store.
struct TradesCounter: LogicAdapter {
    struct Settings: SettingsDeclaration {
        @Setting(minLength: 1, description: "The event type to count.")
        var eventType: String = "trade"
    }

    static let typeName = "trades_counter"
    static let description = "Counts the trades of the sample feed over a recent period, per pair, from the store."
    static let usageExamples = [
        "how many trades in the last 5 minutes?",
        "how many trades were there in the last hour",
        "count the trades",
        "number of trades per pair",
    ]

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func respond(to message: String, context: AdapterContext) async throws -> String {
        let (seconds, period) = Self.period(in: message)
        let rows = try context.query(
            "SELECT json_extract(payload, '$.pair') AS pair, count(*) AS n FROM events WHERE type = ? AND time >= ? GROUP BY pair ORDER BY n DESC, pair",
            [settings.eventType, Date().timeIntervalSince1970 - seconds])
        let total = rows.reduce(0) { $0 + ($1["n"] as? Int ?? 0) }
        guard total > 0 else { return "There were no trades in the last \(period)." }
        let perPair = rows.map { "\($0["pair"] as? String ?? "?") \($0["n"] as? Int ?? 0)" }.joined(separator: ", ")
        return "There were \(total) trades in the last \(period) (\(perPair))."
    }

    /// "the last 5 minutes" → (300, "5 minutes"); 5 minutes when the message names no period.
    static func period(in message: String) -> (Double, String) {
        let words = message.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
        let units: [(String, Double)] = [("second", 1), ("minute", 60), ("hour", 3600), ("day", 86400)]
        for (index, word) in words.enumerated() {
            guard let unit = units.first(where: { word.hasPrefix($0.0) }) else { continue }
            let amount = index > 0 ? Double(words[index - 1]) ?? 1 : 1
            // The amount comes from a chat message: "the last 1e300 minutes" must not trap.
            let amountText = amount.rounded() == amount && abs(amount) < 1e15 ? String(Int(saturating: amount)) : String(amount)
            return (amount * unit.1, amount == 1 ? unit.0 : "\(amountText) \(unit.0)s")
        }
        return (300, "5 minutes")
    }
}
