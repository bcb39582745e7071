import Foundation
@testable import JSONSchema
import Testing

/// A schema that applies two subschemas to the same members at each level doubles its work
/// with each level of nesting: 18 levels of a 1 KB value held the agent's loop 6 s and grew it
/// by 900 MB. What one validation evaluates, and the errors it keeps, are bounded.
struct EvaluationBudgetTests {
    /// `node` is `named` and `parent`, which both describe `children`: 2^depth evaluations.
    static let tree: JSONValue = try! JSONValue.parse(Data("""
        {"$ref": "#/$defs/node", "$defs": {
          "node": {"allOf": [{"$ref": "#/$defs/named"}, {"$ref": "#/$defs/parent"}]},
          "named": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}},
          "parent": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}
        """.utf8))

    /// A tree `depth` levels deep whose leaf has a number for a name (invalid there only).
    static func tree(depth: Int, leafName: JSONValue = 1) -> JSONValue {
        var value: JSONValue = ["name": leafName]
        for _ in 0..<depth { value = ["name": "n", "children": [value]] }
        return value
    }

    @Test func aValueWhoseCheckDoublesWithEachLevelFailsUndecidedSayingWhyInsteadOfRunningOn() throws {
        let validator = try JSONSchemaValidator(schema: Self.tree)
        let errors = validator.validate(Self.tree(depth: 24))
        let first = try #require(errors.first)
        #expect(first.isUndecided, "\(first)")
        #expect(first.message.contains("could not be checked") && first.message.contains("doubles the cost with each level"), "\(first.message)")
        #expect(errors.count <= 1 + JSONSchemaValidator.errorsShownWithAnOverrun)
        // The leaf's error, found once per path to it, is said once.
        #expect(Set(errors.dropFirst().map(\.description)).count == errors.count - 1, "\(errors)")
        // A valid value that deep cannot be checked either: it is not taken for valid.
        #expect(!validator.isValid(Self.tree(depth: 24, leafName: "leaf")))
    }

    @Test func theSameSchemaChecksShallowValuesAsBefore() throws {
        let validator = try JSONSchemaValidator(schema: Self.tree)
        #expect(validator.isValid(Self.tree(depth: 6, leafName: "leaf")))
        let errors = validator.validate(Self.tree(depth: 6))
        #expect(!errors.isEmpty && errors.allSatisfy { !$0.isUndecided && $0.keyword == "type" }, "\(errors)")
    }

    @Test func aLargeValueCheckedInOnePassIsNotRefusedForItsSize() throws {
        let schema: JSONValue = ["type": "array", "items": ["type": "object", "properties": ["a": ["type": "integer"], "b": ["type": "string"]]]]
        let validator = try JSONSchemaValidator(schema: schema)
        // 200,000 items: more evaluations than the base bound, few per value.
        let value: JSONValue = .array(Array(repeating: ["a": 1, "b": "x"], count: 200_000))
        #expect(validator.isValid(value))
        #expect(validator.validate(value).isEmpty)
    }

    @Test func errorsBeyondTheBoundAreCountedNotListed() throws {
        let validator = try JSONSchemaValidator(schema: ["type": "array", "items": ["type": "string"]])
        let errors = validator.validate(.array(Array(repeating: 1, count: 5_000)))
        #expect(errors.count == Evaluator.mostErrors + 1, "\(errors.count)")
        #expect(errors.last?.message.contains("only the first \(Evaluator.mostErrors) are listed") == true)
    }
}
