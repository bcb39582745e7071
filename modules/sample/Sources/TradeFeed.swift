import AgentModuleKit

/// Simulates a market feed: random trades for the configured pairs, reproducible from a seed,
/// no network.
struct TradeFeed: Datasource {
    struct Settings: SettingsDeclaration {
        @Setting(minItems: 1, uniqueItems: true, each: .string(minLength: 1), description: "Trading pairs to simulate.")
        var pairs: [String] = ["ETH/USD", "BTC/USD"]
        @Setting(minimum: 0.001, description: "Seconds between two trades.")
        var interval: Double = 0.5
        @Setting(description: "Seed of the random generator; equal seeds give equal feeds.")
        var seed: Int = 42
    }

    /// One simulated trade, the payload of a `trade` event.
    struct Trade: Codable, Sendable {
        var pair: String
        var side: String
        var price: Double
        var amount: Double
        var sequence: Int
    }

    static let typeName = "trade_feed"
    static let description = "Simulates a trade feed: emits a random `trade` event for one of the pairs every interval."

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        var random = SplitMix64(seed: UInt64(truncatingIfNeeded: settings.seed))
        var prices = settings.pairs.map { _ in 100 + random.nextUnit() * 900 }
        var sequence = (try? context.loadState(Int.self)) ?? nil ?? 0
        while true {
            let index = Int(random.next() % UInt64(settings.pairs.count))
            prices[index] *= 1 + (random.nextUnit() - 0.5) * 0.01
            sequence += 1
            let trade = Trade(
                pair: settings.pairs[index],
                side: random.next() % 2 == 0 ? "buy" : "sell",
                price: (prices[index] * 100).rounded() / 100,
                amount: ((random.nextUnit() * 5) * 1000).rounded() / 1000,
                sequence: sequence
            )
            try context.emit("trade", payload: trade)
            if sequence % 100 == 0 {
                do {
                    try context.saveState(sequence)
                } catch let error as ProcessContextError where error.code == .storeUnavailable {
                    // A full disk stops no feed: the next save tries again.
                    context.log("sequence \(sequence) not saved: \(error)", level: .warning)
                }
            }
            try await context.sleep(seconds: settings.interval)
        }
    }
}

/// A small, fast, seedable generator (SplitMix64), so that feeds are reproducible.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
