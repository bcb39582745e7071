/// A compiled ECMA-262 regular expression for `pattern` and `patternProperties`, matched with
/// a bounded cost: no pattern and no input can hold the caller for more than the validation's
/// `PatternBudget`.
///
/// Three matchers, fastest first:
/// - literal patterns (`LiteralPattern`, linear whatever the input) and simple
///   single-character sequences (`SimplePattern`) are matched directly on Unicode scalars; the
///   latter gives up after a number of steps linear in the input (e.g. `a*a*a*a*b` on a long
///   run of `a`) and leaves the string to the general matcher;
/// - `PatternProgram`, a Thompson NFA simulated in time linear in the input (times the
///   program's size), for every pattern without backreferences, lookaround or property escapes;
/// - ICU's backtracking engine with a step limit (`ICUPattern`) for the rest.
struct PatternRegex: Sendable {
    private enum General: Sendable {
        case program(PatternProgram)
        #if canImport(CPatternICU)
        case icu(ICUPattern)
        #endif
    }

    private let literal: LiteralPattern?
    private let simple: SimplePattern?
    /// `nil` for literals, and for simple patterns that neither the linear program nor ICU
    /// takes (e.g. `^a{0,100000000}$`): then an input on which `SimplePattern` gives up is
    /// over budget.
    private let general: General?
    /// The pattern as written in the schema.
    let source: String

    /// Compiles `pattern`; throws a readable message when it is not a supported ECMA-262 regex.
    init(_ pattern: String) throws(ECMARegexTranslator.InvalidPattern) {
        source = pattern
        // Translating also checks ECMA-262 syntax, whichever matcher ends up being used.
        let translated = try ECMARegexTranslator.translate(pattern)
        literal = LiteralPattern(pattern)
        simple = literal == nil ? SimplePattern(pattern) : nil
        if literal != nil {
            general = nil
        } else if simple != nil {
            general = try? PatternRegex.compileGeneral(pattern, translated)
        } else {
            general = try PatternRegex.compileGeneral(pattern, translated)
        }
    }

    private static func compileGeneral(_ pattern: String, _ translated: String) throws(ECMARegexTranslator.InvalidPattern) -> General {
        let reason: String
        let hint: String
        do {
            return .program(try PatternProgram(try PatternParser.parse(pattern)))
        } catch let error as PatternParser.NotRegular {
            reason = "it uses \(error.feature)"
            hint = "rewrite it without \(error.feature), or bound the length of a lookbehind"
        } catch {
            reason = "its automaton would exceed \(PatternProgram.maxInstructions) instructions"
            hint = "use smaller {n,m} bounds"
        }
        #if canImport(CPatternICU)
        guard let icu = ICUPattern(icuPattern: translated, patternLength: pattern.unicodeScalars.count) else {
            throw ECMARegexTranslator.InvalidPattern(message: "not supported: \(reason), and ICU, which matches such patterns, refuses it; \(hint)")
        }
        return .icu(icu)
        #else
        throw ECMARegexTranslator.InvalidPattern(message: "not supported on this platform: \(reason); \(hint)")
        #endif
    }

    /// Whether the pattern matches anywhere in `string` (patterns are not implicitly
    /// anchored), spending at most `budget`; `.overBudget` when it runs out first.
    func matches(_ string: String, budget: inout PatternBudget) -> PatternOutcome {
        if let literal { return literal.matches(string) ? .match : .noMatch }
        let scalars = Array(string.unicodeScalars)
        if let simple, let found = simple.matches(scalars) {
            return found ? .match : .noMatch
        }
        switch general {
        case .program(let program):
            return program.matches(scalars, budget: &budget.remaining)
        #if canImport(CPatternICU)
        case .icu(let icu):
            return icu.matches(string, budget: &budget)
        #endif
        case nil:
            return .overBudget
        }
    }

    /// Whether strings that the fast paths leave are matched by the linear program: for tests.
    var usesLinearProgram: Bool {
        if case .program = general { return true }
        return false
    }
}
