import AgentTestSupport
import Testing
@testable import JSONSchema

/// Recursive schemas: cycles that never reach the instance's members stop with an error,
/// while deep but legitimate documents validate.
@Suite("Recursion", .ownThreads)
struct RecursionTests {
    @Test func referenceCycleWithoutProgressIsReported() throws {
        let validator = try JSONSchemaValidator(schema: ["$ref": "#"])
        let errors = validator.validate(1)
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("reference cycle") == true)
        #expect(!validator.isValid(1))
    }

    @Test func mutualReferenceCycleIsReported() throws {
        let schema: JSONValue = ["$defs": ["a": ["$ref": "#/$defs/b"], "b": ["allOf": [["$ref": "#/$defs/a"]]]], "$ref": "#/$defs/a"]
        let validator = try JSONSchemaValidator(schema: schema)
        #expect(!validator.isValid("x"))
    }

    @Test func deepDocumentsValidateOnAConcurrencyThread() async throws {
        let validator = try JSONSchemaValidator(schema: [
            "type": "array", "items": ["$ref": "#"], "maxItems": 1,
        ])
        var deep: JSONValue = []
        for _ in 0..<500 { deep = [deep] }
        let document = deep
        let result = await Task.detached { (validator.isValid(document), validator.validate(document).count) }.value
        #expect(result == (true, 0))
        var tooWide = deep
        tooWide = [tooWide, 1]
        #expect(validator.validate(tooWide).map(\.keywordLocation) == ["/maxItems", "/items/$ref/type"])
    }
}
