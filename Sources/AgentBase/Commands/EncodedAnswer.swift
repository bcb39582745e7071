import JSONSchema

/// An answer already made as JSON by its host (a status snapshot, a settings report): the
/// registry's encoder takes it as it is, so a big answer is neither rebuilt nor re-checked
/// member by member. Its command's `answerSchema` still says what it holds.
public struct EncodedAnswer: Encodable, Sendable {
    public let json: JSONValue

    public init(_ json: JSONValue) { self.json = json }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(json)
    }
}

extension EncodedAnswer {
    /// An answer a host made as JSON, success or refusal: `{"ok": false, …}` becomes the
    /// refusal every front answers (its `code`, else `failed`; its `error`, else its `errors`
    /// joined), keeping its `pointer`, `errors` and the members a feature adds.
    public static func result(_ answer: JSONValue) -> Result<EncodedAnswer, CommandError> {
        guard answer["ok"]?.boolValue == false, let object = answer.objectValue else { return .success(EncodedAnswer(answer)) }
        let errors = object["errors"]?.arrayValue
        let listed = errors?.compactMap { $0.stringValue ?? $0["message"]?.stringValue } ?? []
        let message = object["error"]?.stringValue ?? (listed.isEmpty ? "the command failed" : listed.joined(separator: "\n"))
        let code = object["code"]?.stringValue.flatMap(CommandError.Code.init(rawValue:)) ?? .failed
        var details = JSONObject()
        for (key, value) in object where !["ok", "code", "error", "pointer", "retry_after", "errors"].contains(key) { details[key] = value }
        return .failure(CommandError(code, message, pointer: object["pointer"]?.stringValue, retryAfter: object["retry_after"]?.numberValue?.intValue,
                                     errors: errors, details: details.isEmpty ? nil : details))
    }
}
