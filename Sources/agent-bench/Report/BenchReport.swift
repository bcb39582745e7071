import Foundation

/// Everything one run of the bench measured, with the machine and build it ran on.
struct BenchReport: Encodable {
    var machine: MachineInfo
    var quick: Bool
    var sections: [Section] = []

    var failures: [String] { sections.flatMap { section in section.failures.map { "\(section.number). \($0)" } } }

    /// The report as pretty-printed JSON.
    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
