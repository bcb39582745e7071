extension JSONValue {
    /// Parses UTF-8 JSON text strictly (RFC 8259): no comments, trailing commas, leading zeros,
    /// unescaped control characters or invalid UTF-8. Numbers keep their exact value, objects
    /// their member order; for a repeated key the last value wins.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = JSONParser(buffer)
                return try parser.parseDocument()
            }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = JSONParser(buffer)
                return try parser.parseDocument()
            }
        }.get()
    }

    /// Parses JSON text; see `parse(_:)` for bytes.
    public static func parse(_ string: String) throws(JSONParseError) -> JSONValue {
        var text = string
        return try text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = JSONParser(buffer)
                return try parser.parseDocument()
            }
        }.get()
    }
}
