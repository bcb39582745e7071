import JSONSchema

/// Writes a snapshot's answer as compact JSON bytes (`JSONValue.serializedBytes`): the answer
/// is written once per snapshot and sent to every request that waited for it.
package enum SnapshotJSONWriter {
    /// `value` as compact JSON.
    package static func bytes(_ value: JSONValue) -> [UInt8] {
        value.serializedBytes(capacity: 8 << 10)
    }
}
