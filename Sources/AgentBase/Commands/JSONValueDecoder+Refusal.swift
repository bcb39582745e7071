import JSONSchema

extension JSONValueDecoder {
    /// A decoding error as every front refuses it: `invalid`, the member's pointer, and the
    /// message prefixed by it (`/limit: expected an integer, found a string`).
    public static func refusal(of error: any Error) -> CommandError {
        guard let error = error as? DecodingError else { return .invalid("\(error)") }
        let pointer = pointer(of: error)
        let reason: String
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): reason = context.debugDescription
        case .keyNotFound(let key, _): reason = "\"\(key.stringValue)\" is required"
        @unknown default: reason = "\(error)"
        }
        return .invalid("\(pointer.isEmpty ? "" : pointer + ": ")\(reason)", pointer: pointer)
    }
}
