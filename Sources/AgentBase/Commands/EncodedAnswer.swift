import JSONSchema

/// An answer its host already made as JSON, taken by the registry's encoder as it is. Only
/// for an answer serialised on a hot path for speed: `status` and `metrics`, made from one
/// snapshot and rendered once for every request of a batch (``SnapshotBatcher`` in the command
/// layer), where building a typed value first would cost a copy of the whole answer. Every
/// other command answers a typed `Encodable` value; its command's `answerSchema` still says
/// what this one holds.
public struct EncodedAnswer: Encodable, Sendable {
    public let json: JSONValue

    public init(_ json: JSONValue) { self.json = json }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(json)
    }
}
