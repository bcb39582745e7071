import Foundation

/// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests of
/// `GET /metrics`: every line must be a `# HELP`, a `# TYPE`, a comment or a sample; metric and
/// label names must be well formed; label values quoted with the format's escapes; values
/// floats (or NaN, +Inf, -Inf); a family's TYPE comes once, before its samples, which are
/// grouped; no series appears twice.
package struct PrometheusExposition {
    package struct Family {
        package var name: String
        package var type: String?
        package var help: String?
        package var samples: [Sample] = []
    }

    package struct Sample {
        package var name: String
        package var labels: [String: String]
        package var value: Double
    }

    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    package private(set) var families: [String: Family] = [:]

    package init(_ text: String) throws {
        var order: [String] = []
        var seenSeries = Set<String>()
        var lastFamily: String?
        for (number, line) in text.components(separatedBy: "\n").enumerated() {
            func fail(_ why: String) -> Malformed { Malformed(description: "line \(number + 1): \(why): \(line)") }
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, parts[1] == "HELP" || parts[1] == "TYPE" else { continue }
                let name = String(parts[2])
                guard Self.isMetricName(name) else { throw fail("bad metric name") }
                var family = families[name] ?? Family(name: name)
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else { throw fail("bad type") }
                    guard family.type == nil else { throw fail("a second TYPE") }
                    guard family.samples.isEmpty else { throw fail("TYPE after samples") }
                    family.type = String(parts[3])
                } else {
                    guard family.help == nil else { throw fail("a second HELP") }
                    family.help = parts.count == 4 ? String(parts[3]) : ""
                }
                if families[name] == nil { order.append(name) }
                families[name] = family
                continue
            }
            let sample = try Self.sample(line, fail: fail)
            // A histogram's or summary's samples have suffixes; everything here is a counter or a gauge.
            let familyName = sample.name
            guard var family = families[familyName] else { throw fail("a sample of a family without TYPE") }
            if lastFamily != familyName, !family.samples.isEmpty { throw fail("samples of \(familyName) are not grouped") }
            let key = familyName + sample.labels.sorted { $0.key < $1.key }.map { "\u{0}\($0.key)=\($0.value)" }.joined()
            guard seenSeries.insert(key).inserted else { throw fail("a series appears twice") }
            family.samples.append(sample)
            families[familyName] = family
            lastFamily = familyName
        }
    }

    package static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == ":" }
    }

    package static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    private static func sample(_ line: String, fail: (String) -> Malformed) throws -> Sample {
        let scalars = Array(line.unicodeScalars)
        var index = 0
        var name = ""
        while index < scalars.count, scalars[index] != "{", scalars[index] != " " {
            name.unicodeScalars.append(scalars[index])
            index += 1
        }
        guard isMetricName(name) else { throw fail("bad metric name") }
        var labels: [String: String] = [:]
        if index < scalars.count, scalars[index] == "{" {
            index += 1
            while true {
                guard index < scalars.count else { throw fail("unterminated labels") }
                if scalars[index] == "}" { index += 1; break }
                var label = ""
                while index < scalars.count, scalars[index] != "=" {
                    label.unicodeScalars.append(scalars[index])
                    index += 1
                }
                guard isLabelName(label), index + 1 < scalars.count, scalars[index + 1] == "\"" else { throw fail("bad label name \(label)") }
                index += 2
                var value = ""
                while true {
                    guard index < scalars.count else { throw fail("unterminated label value") }
                    let c = scalars[index]
                    if c == "\"" { index += 1; break }
                    if c == "\\" {
                        guard index + 1 < scalars.count else { throw fail("a lone backslash") }
                        switch scalars[index + 1] {
                        case "\\": value += "\\"
                        case "\"": value += "\""
                        case "n": value += "\n"
                        default: throw fail("a bad escape")
                        }
                        index += 2
                        continue
                    }
                    value.unicodeScalars.append(c)
                    index += 1
                }
                guard labels.updateValue(value, forKey: label) == nil else { throw fail("label \(label) twice") }
                guard index < scalars.count else { throw fail("unterminated labels") }
                if scalars[index] == "," { index += 1 } else if scalars[index] != "}" { throw fail("expected , or }") }
            }
        }
        guard index < scalars.count, scalars[index] == " " else { throw fail("no value") }
        let rest = String(String.UnicodeScalarView(scalars[(index + 1)...])).split(separator: " ")
        guard rest.count == 1 || (rest.count == 2 && Int64(rest[1]) != nil) else { throw fail("bad value or timestamp") }
        let text = String(rest[0])
        let value: Double
        switch text {
        case "NaN": value = .nan
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        default:
            guard let parsed = Double(text), !text.hasPrefix("+") || text.count > 1 else { throw fail("bad value \(text)") }
            value = parsed
        }
        return Sample(name: name, labels: labels, value: value)
    }

    /// The value of the one sample of `name` with exactly `labels`.
    package func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        families[name]?.samples.first { $0.labels == labels }?.value
    }
}
