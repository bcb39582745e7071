/// One measured figure: a row of the table.
struct Figure: Codable {
    /// What the value counts.
    enum Unit: String, Codable {
        case milliseconds = "ms"
        case microseconds = "µs"
        case eventsPerSecond = "events/s"
        case percentOfCore = "% of a core"
        case megabytes = "MB"
        case ratio = "×"
        case count = "count"
        case perSecond = "/s"
    }

    var label: String
    var unit: Unit
    var median: Double
    /// Reported only when there are enough samples for it to differ from the maximum.
    var p99: Double?
    var max: Double?
    /// Repetitions (or samples) behind the figure.
    var count: Int
    /// A short remark: a target ("target < 50 ms; …", which `--markdown` shows as the
    /// figure's target), a comparison, a caveat.
    var note: String?
    /// The labels of the figures of the same section (measured in the same run) this one is
    /// compared with: the other tools', or the floor (``Section/compare(_:with:)``).
    var baselines: [String]?

    /// A figure summarised from samples: median, p99 (from 100 samples on) and max.
    init(_ label: String, _ unit: Unit, samples: Samples, note: String? = nil) {
        self.label = label
        self.unit = unit
        median = samples.median
        p99 = samples.count >= 100 ? samples.p99 : nil
        max = samples.max
        count = samples.count
        self.note = note
    }

    /// A figure given by its summary (e.g. latencies summarised by the process that measured them).
    init(_ label: String, _ unit: Unit, median: Double, p99: Double? = nil, max: Double? = nil, count: Int, note: String? = nil) {
        self.label = label
        self.unit = unit
        self.median = median
        self.p99 = p99
        self.max = max
        self.count = count
        self.note = note
    }
}

/// A numbered group of figures with the method that produced them.
struct Section: Codable {
    var number: Int
    var title: String
    /// How the figures were measured.
    var method: String
    var figures: [Figure] = []
    /// Failures: a run that did not complete, lost events, leftover processes.
    var failures: [String] = []
    /// Observations worth reading next to the figures.
    var notes: [String] = []
    /// CPU that processes other than the bench's used while the figures were taken, in % of
    /// one core: how quiet the machine was.
    var othersCPU: Double?
    /// Of that, the hypervisor's steal (another guest ran on this machine's cores).
    var stealCPU: Double?
    /// CPU seconds of processes the bench started but could not reap (workers of a killed
    /// agent-control), so that they do not count as other processes'.
    var unreapedCPUSeconds: Double = 0

    /// A figure this build cannot measure, saying why (a failure, so the run says so).
    static func notBuilt(_ number: Int, _ title: String, because reason: String) -> Section {
        var section = Section(number: number, title: title, method: "not measured")
        section.failures = [reason]
        return section
    }

    init(number: Int, title: String, method: String) {
        self.number = number
        self.title = title
        self.method = method
    }

    mutating func add(_ figure: Figure) { figures.append(figure) }

    /// The figure labelled `label` is compared with the figures labelled `baselines` (the
    /// same measure of another tool, or the floor, in this run). A label not there (a part
    /// of the run that failed) is left out.
    mutating func compare(_ label: String, with baselines: String...) {
        guard let index = figures.firstIndex(where: { $0.label == label }) else { return }
        let found = baselines.filter { baseline in figures.contains { $0.label == baseline } }
        if !found.isEmpty { figures[index].baselines = (figures[index].baselines ?? []) + found }
    }
    mutating func fail(_ text: String) { failures.append(text) }
    mutating func note(_ text: String) { notes.append(text) }
}
