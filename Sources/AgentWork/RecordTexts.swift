import JSONSchema

/// A run's record as a store writes it: its text (`data`), and its record for lists
/// (`listed`, see ``RunListing``) when a member is too long for a list.
package struct RecordTexts {
    package let data: String
    package let listed: String?

    package init(_ record: JSONValue) {
        let bytes = record.serializedBytes(capacity: 512)
        data = String(decoding: bytes, as: UTF8.self)
        listed = RunListing.listed(record, length: bytes.count)?.serialized()
    }
}
