import Foundation
import JSONSchema

/// Figure 14: the longest a single validation takes with a pathological `pattern` (issue 34),
/// against `NSRegularExpression` (what patterns were matched with before) on tiny inputs.
enum PatternBench {
    /// Pathological cases: the pattern, the instance, and a short name.
    static let cases: [(name: String, pattern: String, input: String)] = [
        ("(x+x+)+y, 120 x", "(x+x+)+y", String(repeating: "x", count: 120)),
        ("^(a+)+$, 5,000 a + b", "^(a+)+$", String(repeating: "a", count: 5_000) + "b"),
        ("^(a+)+$, 200,000 a + b (over budget)", "^(a+)+$", String(repeating: "a", count: 200_000) + "b"),
        ("a*a*a*a*a*a*b, 5,000 a", "a*a*a*a*a*a*b", String(repeating: "a", count: 5_000)),
        ("a{0,5000}b, 5,000 a (over budget)", "a{0,5000}b", String(repeating: "a", count: 5_000)),
        ("(a|aa)+\\1c, 40 a (ICU, over budget)", "(a|aa)+\\1c", String(repeating: "a", count: 40)),
        ("^(?=(a+)+$), 40 a + b (ICU, over budget)", "^(?=(a+)+$)", String(repeating: "a", count: 40) + "b"),
    ]

    /// Baselines: the old matcher on inputs small enough to finish.
    static let baselines: [(name: String, pattern: String, input: String)] = [
        ("(x+x+)+y, 18 x", "(x+x+)+y", String(repeating: "x", count: 18)),
        ("^(a+)+$, 18 a + b", "^(a+)+$", String(repeating: "a", count: 18) + "b"),
    ]

    static func run(_ environment: BenchEnvironment) -> Section {
        var section = Section(
            number: 14, title: "Pathological patterns (one validation each)",
            method: "JSONSchemaValidator(schema: {\"pattern\": P}).validate(string) for each case, wall time of one validation, "
                + "\(environment.quick ? 20 : 100) repetitions: the longest a pattern can hold the loop. Every match of a "
                + "validation shares one budget of \(JSONSchemaValidator.patternStepBudget) steps; a case marked over budget ends in a "
                + "validation error that names the pattern. Baseline: NSRegularExpression (ICU, unbounded backtracking: the "
                + "matcher before issue 34) on the ICU translation of the pattern, with inputs small enough to finish.")
        let repetitions = environment.quick ? 20 : 100
        for item in cases {
            do {
                let validator = try JSONSchemaValidator(schema: ["pattern": .string(item.pattern)])
                var samples = Samples()
                var errors: [ValidationError] = []
                for _ in 0..<repetitions {
                    samples.append(Clock.milliseconds { errors = validator.validate(.string(item.input)) })
                }
                let outcome = errors.isEmpty ? "valid" : errors[0].message.contains("could not be checked") ? "over budget" : "no match"
                section.add(Figure(item.name, .milliseconds, samples: samples, note: outcome))
            } catch {
                section.fail("\(item.pattern): \(error)")
            }
        }
        for item in baselines {
            guard let regex = try? NSRegularExpression(pattern: item.pattern) else {
                section.fail("NSRegularExpression refuses \(item.pattern)")
                continue
            }
            var samples = Samples()
            let range = NSRange(location: 0, length: item.input.utf16.count)
            for _ in 0..<(environment.quick ? 3 : 10) {
                samples.append(Clock.milliseconds { _ = regex.firstMatch(in: item.input, range: range) })
            }
            section.add(Figure("baseline NSRegularExpression: \(item.name)", .milliseconds, samples: samples,
                               note: "doubles with each added character"))
        }
        return section
    }
}
