/// Repeated measurements of one quantity, and their order statistics.
struct Samples {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) { self.values = values }

    mutating func append(_ value: Double) { values.append(value) }

    var count: Int { values.count }
    var isEmpty: Bool { values.isEmpty }

    /// The nearest-rank percentile (`p` in 0...1).
    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = Int((Double(sorted.count) * p).rounded(.up))
        return sorted[Swift.min(sorted.count - 1, Swift.max(0, rank - 1))]
    }

    var median: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }
    var max: Double { values.max() ?? .nan }
    var min: Double { values.min() ?? .nan }
}
