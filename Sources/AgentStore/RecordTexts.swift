import AgentWork
import JSONSchema

/// A run's record as the store writes it: its text (`data`), and its record for lists
/// (`listed`, see ``RunListing``) when a member is too long for a list.
struct RecordTexts {
    let data: String
    let listed: String?

    init(_ record: JSONValue) {
        let bytes = record.serializedBytes(capacity: 512)
        data = String(decoding: bytes, as: UTF8.self)
        listed = RunListing.listed(record, length: bytes.count)?.serialized()
    }
}
