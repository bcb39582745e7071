import JSONSchema

/// Schema compilation and validation on arbitrary input. The first byte chooses the mode;
/// the rest is `schema NUL instance` (JSON texts) or, in the pattern and format modes, one
/// string. Whatever compiles must validate without trapping, and `isValid` must agree with
/// `validate`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSchema(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    let assertFormats = mode & 1 == 1
    switch mode >> 1 & 3 {
    case 0, 1:
        let split = rest.firstIndex(of: 0) ?? rest.endIndex
        guard let schema = try? JSONValue.parse(rest[..<split]) else { return 0 }
        let instance = split < rest.endIndex ? (try? JSONValue.parse(rest[(split + 1)...])) ?? .null : .null
        check(schema, instance, assertFormats)
    case 2:
        // The regex translator: the text as a pattern, and as an instance of format "regex".
        let text = String(decoding: rest, as: UTF8.self)
        check(["pattern": .string(text)], .string(text), assertFormats)
        check(["patternProperties": .object(JSONObject([(text, false)]))], .object(JSONObject([(text, 1)])), assertFormats)
        check(["format": "regex"], .string(text), true)
    default:
        // Format checkers, asserted.
        let text = String(decoding: rest, as: UTF8.self)
        for format in formats { check(["format": .string(format)], .string(text), true) }
    }
    return 0
}

let formats = [
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
]

func check(_ schema: JSONValue, _ instance: JSONValue, _ assertFormats: Bool) {
    guard let validator = try? JSONSchemaValidator(schema: schema, options: .init(formatAssertion: assertFormats)) else { return }
    let errors = validator.validate(instance)
    guard errors.isEmpty == validator.isValid(instance) else {
        fatalError("isValid disagrees with validate (\(errors.count) errors) for \(schema.serialized()) on \(instance.serialized())")
    }
    for error in errors { _ = error.description }
}
