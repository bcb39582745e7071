extension JSONValue {
    /// JSON text for this value. Strings are escaped (control characters as `\uXXXX` or the
    /// short escapes), numbers keep their exact text, and object members keep their order
    /// unless `sortedKeys` is set. `pretty` indents nested containers by two spaces.
    public func serialized(pretty: Bool = false, sortedKeys: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty, sortedKeys: sortedKeys), as: UTF8.self)
    }

    /// ``serialized(pretty:sortedKeys:)`` as UTF-8 bytes, for a caller that writes them (a
    /// file, a pipe, a socket): no `String` is made. `capacity`: the bytes to reserve first.
    public func serializedBytes(pretty: Bool = false, sortedKeys: Bool = false, capacity: Int = 64) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty, sortedKeys: sortedKeys, capacity: capacity)
        writer.write(self, indent: 0)
        return writer.output
    }

    /// The length in bytes of `serialized()`, or nil once it is more than `limit`: a check of
    /// a value's size that costs no more than `limit` bytes' worth of work, however large the
    /// value (a string's length is known without reading it).
    public func serializedLength(atMost limit: Int) -> Int? {
        var total = 0
        return JSONWriter.measure(self, total: &total, limit: limit) ? total : nil
    }
}
