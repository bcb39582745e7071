import Foundation

/// Everything one run of the bench measured, with the machine and build it ran on.
struct BenchReport: Codable {
    var machine: MachineInfo
    var quick: Bool
    var sections: [Section] = []

    var failures: [String] { sections.flatMap { section in section.failures.map { "\(section.number). \($0)" } } }

    /// How numbers that are not finite are written (JSON has no NaN).
    private static let nonFinite = (positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")

    /// The report as pretty-printed JSON.
    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: Self.nonFinite.positiveInfinity, negativeInfinity: Self.nonFinite.negativeInfinity, nan: Self.nonFinite.nan)
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A report saved with `--json` (so that a table can be made again without running).
    static func read(_ path: String) throws -> BenchReport {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("\(path): cannot read the file") }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: nonFinite.positiveInfinity, negativeInfinity: nonFinite.negativeInfinity, nan: nonFinite.nan)
        do {
            return try decoder.decode(BenchReport.self, from: data)
        } catch DecodingError.keyNotFound(let key, let context) {
            let at = (context.codingPath + [key]).map(\.stringValue).joined(separator: "/")
            throw BenchError("\(path): not a report of agent-bench --json: expected a member /\(at), found none")
        } catch {
            throw BenchError("\(path): not a report of agent-bench --json (\(error))")
        }
    }
}
