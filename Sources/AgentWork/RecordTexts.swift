import JSONSchema

/// A run's record as a store writes it: its text (`data`), and its record for lists
/// (`listed`, see ``RunListing``) when a member is too long for a list.
package struct RecordTexts {
    package let data: String
    package let listed: String?
    /// The length of `data` in bytes.
    package let length: Int

    /// The texts of `run`'s record (``TaskRun/storedBytes``): an input whose text is longer
    /// than a list's member (as every input held as its text alone is) is put in as it is, and
    /// left out of the record for lists.
    package init(_ run: TaskRun) {
        guard let input = run.held.text, input.count > RunListing.storedMemberLimit else {
            self.init(run.storedJSON)
            return
        }
        let record = run.storedRecord(withInput: false)
        let bytes = TaskRun.appending(input, as: "input", to: record)
        self.init(bytes: bytes, listed: RunListing.listed(record, length: bytes.count, omitting: ["input"]))
    }

    package init(_ record: JSONValue) {
        let bytes = record.serializedBytes(capacity: 512)
        self.init(bytes: bytes, listed: RunListing.listed(record, length: bytes.count))
    }

    private init(bytes: [UInt8], listed: JSONValue?) {
        data = String(decoding: bytes, as: UTF8.self)
        length = bytes.count
        self.listed = listed?.serialized()
    }
}
