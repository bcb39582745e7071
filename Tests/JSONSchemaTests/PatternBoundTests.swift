import AgentTestSupport
import Foundation
import Testing
@testable import JSONSchema

/// Issue 34: no pattern and no input may hold a validation without bound. The bound is a
/// step count, so these tests assert answers and step counts, never times.
@Suite("Pattern matching is bounded", .ownThreads)
struct PatternBoundTests {
    /// Steps the linear matcher spends on `input`, and its answer.
    static func programRun(_ pattern: String, _ input: String) throws -> (PatternOutcome, steps: Int) {
        let program = try PatternProgram(try PatternParser.parse(pattern))
        var budget = Int.max
        let outcome = program.matches(Array(input.unicodeScalars), budget: &budget)
        return (outcome, Int.max - budget)
    }

    @Test func nestedQuantifiersAgainst120XAnswerInLinearSteps() throws {
        let regex = try PatternRegex("(x+x+)+y")
        #expect(regex.usesLinearProgram)
        var budget = PatternBudget()
        #expect(regex.matches(String(repeating: "x", count: 120), budget: &budget) == .noMatch)
        #expect(regex.matches(String(repeating: "x", count: 120) + "y", budget: &budget) == .match)
        // A few steps per instruction per scalar: the program has under 20 instructions.
        let (outcome, steps) = try Self.programRun("(x+x+)+y", String(repeating: "x", count: 120))
        #expect(outcome == .noMatch)
        #expect(steps < 121 * 20 * 3)
    }

    @Test func anchoredNestedPlusIsLinearInTheInput() throws {
        var previous = 0
        for length in [1_000, 2_000, 4_000] {
            let input = String(repeating: "a", count: length) + "b"
            let (outcome, steps) = try Self.programRun("^(a+)+$", input)
            #expect(outcome == .noMatch)
            // Doubling the input at most doubles the steps (plus a constant).
            if previous > 0 { #expect(steps <= 2 * previous + 100, "\(length): \(steps) after \(previous)") }
            previous = steps
        }
        let (outcome, _) = try Self.programRun("^(a+)+$", String(repeating: "a", count: 4_000))
        #expect(outcome == .match)
        // And within the budget of one validation.
        let validator = try JSONSchemaValidator(schema: ["pattern": "^(a+)+$"])
        #expect(validator.isValid(.string(String(repeating: "a", count: 4_000))))
        #expect(!validator.isValid(.string(String(repeating: "a", count: 4_000) + "b")))
    }

    @Test func fastPathsLeaveBacktrackingToTheLinearMatcher() throws {
        // SimplePattern would backtrack O(n^6) here, the naive literal search O(n·m).
        var budget = PatternBudget()
        let simple = try PatternRegex("a*a*a*a*a*a*b")
        #expect(simple.matches(String(repeating: "a", count: 3_000), budget: &budget) == .noMatch)
        #expect(simple.matches(String(repeating: "a", count: 3_000) + "b", budget: &budget) == .match)
        let needle = String(repeating: "a", count: 200) + "b"
        let literal = try PatternRegex(needle)
        budget = PatternBudget()
        #expect(literal.matches(String(repeating: "a", count: 3_000), budget: &budget) == .noMatch)
        #expect(literal.matches(String(repeating: "a", count: 3_000) + "b", budget: &budget) == .match)
    }

    @Test func overBudgetIsAValidationErrorNamingThePattern() throws {
        let validator = try JSONSchemaValidator(schema: ["properties": ["name": ["pattern": "^(a+)+$"]]])
        let instance: JSONValue = ["name": .string(String(repeating: "a", count: 200_000) + "b")]
        let errors = validator.validate(instance)
        #expect(errors.count == 1)
        let error = try #require(errors.first)
        #expect(error.keyword == "pattern")
        #expect(error.instanceLocation == "/name")
        #expect(error.keywordLocation == "/properties/name/pattern")
        #expect(error.message.contains("the pattern ^(a+)+$ could not be checked"))
        #expect(error.message.contains("bound of \(PatternBudget.perValidation) steps") && error.message.contains("simplify the pattern"))
        #expect(error.isUndecided, "an overrun is marked as undecided, apart from a mismatch")
        #expect(validator.validate(["name": "b"]).allSatisfy { !$0.isUndecided })
        #expect(!validator.isValid(instance))
    }

    @Test func overBudgetUnderNotStillFails() throws {
        let validator = try JSONSchemaValidator(schema: ["not": ["pattern": "^(a+)+$"]])
        let instance = JSONValue.string(String(repeating: "a", count: 200_000) + "b")
        #expect(!validator.isValid(instance))
        let errors = validator.validate(instance)
        #expect(errors.contains { $0.keyword == "pattern" && $0.message.contains("could not be checked") })
    }

    @Test func overBudgetInPatternPropertiesNamesTheMember() throws {
        let key = String(repeating: "a", count: 200_000) + "b"
        let validator = try JSONSchemaValidator(schema: ["patternProperties": ["^(a+)+$": ["type": "integer"]], "additionalProperties": false])
        let errors = validator.validate(.object(JSONObject([(key, 1)])))
        let error = try #require(errors.first)
        #expect(errors.count == 1)
        #expect(error.keyword == "patternProperties")
        #expect(error.instanceLocation == "/" + key)
        #expect(error.keywordLocation == "/patternProperties/^(a+)+$")
    }

    /// The budget is per validation: many strings that each cost a fair share add up.
    @Test func budgetIsSharedByAllMatchesOfOneValidation() throws {
        let validator = try JSONSchemaValidator(schema: ["items": ["pattern": "^(a|b)+(c|d)+e$"]])
        let one = String(repeating: "ab", count: 500) + "cde"
        let (_, steps) = try Self.programRun("^(a|b)+(c|d)+e$", one)
        #expect(steps < PatternBudget.perValidation / 10)
        #expect(validator.validate([.string(one)]).isEmpty)
        let many = JSONValue.array(Array(repeating: .string(one), count: 2 * PatternBudget.perValidation / steps))
        let errors = validator.validate(many)
        #expect(!errors.isEmpty)
        #expect(errors.allSatisfy { $0.keyword == "pattern" && $0.message.contains("could not be checked") })
        // Not the pattern's fault: the message says the earlier values spent the bound.
        #expect(errors.allSatisfy { $0.message.contains("the values checked before it in this validation spent most of the bound")
                && !$0.message.contains("simplify the pattern") }, "\(errors.first?.message ?? "")")
        #expect(!validator.isValid(many))
    }

    #if canImport(CPatternICU)
    /// Backreferences and lookaround go to ICU, which counts steps too.
    @Test func icuPatternsAreBoundedToo() throws {
        let backreference = try PatternRegex("(a|aa)+\\1c")
        #expect(!backreference.usesLinearProgram)
        var budget = PatternBudget()
        #expect(backreference.matches("aaac", budget: &budget) == .match)
        #expect(backreference.matches("aab", budget: &budget) == .noMatch)
        #expect(backreference.matches(String(repeating: "a", count: 40), budget: &budget) == .overBudget)
        #expect(budget.remaining < PatternBudget.icuTickCost)
        let lookahead = try JSONSchemaValidator(schema: ["pattern": "^(?=(a+)+$)"])
        let errors = lookahead.validate(.string(String(repeating: "a", count: 40) + "b"))
        #expect(errors.map(\.keyword) == ["pattern"])
        #expect(errors.first?.message.contains("^(?=(a+)+$) could not be checked") == true)
        #expect(lookahead.isValid(.string("aaa")))
    }

    /// What neither matcher takes is a compile error that says what to change.
    @Test func unboundedLookbehindIsACompileErrorWithAHint() {
        let error = #expect(throws: JSONSchemaCompileError.self) { try JSONSchemaValidator(schema: ["pattern": "(?<=a+)b"]) }
        #expect(error?.schemaLocation == "/pattern")
        #expect(error?.message.contains("it uses a lookahead or lookbehind") == true, "\(String(describing: error))")
        #expect(error?.message.contains("bound the length of a lookbehind") == true, "\(String(describing: error))")
    }
    #endif

    /// A class listing many scalars out of order (sorted once, not per insert) still answers
    /// right, in the simple fast path and in the linear program.
    @Test func largeUnsortedClassesMatch() throws {
        let scalars = (0..<3_000).reversed().map { Unicode.Scalar(0x4E00 + 2 * $0)! }
        let body = String(String.UnicodeScalarView(scalars))
        var budget = PatternBudget()
        for pattern in ["^[" + body + "]+$", "^(?:[" + body + "\\s])+$"] {
            let regex = try PatternRegex(pattern)
            #expect(regex.matches("\u{4E00}\u{4E02}\u{5F6E}", budget: &budget) == .match, "\(pattern.prefix(8))")
            #expect(regex.matches("\u{4E00}\u{4E01}", budget: &budget) == .noMatch, "\(pattern.prefix(8))")
        }
    }

    @Test func programsOverTheSizeCapStillCompile() throws {
        #expect(try PatternRegex("^[a-z0-9]{1,255}$").usesLinearProgram)
        #expect(throws: PatternProgram.TooLarge.self) { try PatternProgram(try PatternParser.parse("(a{1000}){1000}")) }
        #expect(throws: PatternProgram.TooLarge.self) { try PatternProgram(try PatternParser.parse("^a{0,100000000}$")) }
        // Repeating the empty string adds nothing, however many times.
        #expect(throws: Never.self) { try PatternProgram(try PatternParser.parse("(){100000000}x")) }
    }
}
