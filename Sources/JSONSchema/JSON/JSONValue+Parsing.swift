extension JSONValue {
    /// Parses UTF-8 JSON text strictly (RFC 8259): no comments, trailing commas, leading zeros,
    /// unescaped control characters, invalid UTF-8 or a key repeated in one object. Numbers keep
    /// their exact value, objects their member order. An error carries the line, column and
    /// JSON pointer of what is at fault.
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
