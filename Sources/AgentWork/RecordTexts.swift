import JSONSchema

/// A run's record as a store writes it: its text (`data`), and its record for lists
/// (`listed`, see ``RunListing``) when a member is too long for a list.
package struct RecordTexts {
    package let data: String
    package let listed: String?
    /// The length of `data` in bytes.
    package let length: Int

    package init(_ record: JSONValue) {
        let bytes = record.serializedBytes(capacity: 512)
        data = String(decoding: bytes, as: UTF8.self)
        length = bytes.count
        listed = RunListing.listed(record, length: bytes.count)?.serialized()
    }
}
