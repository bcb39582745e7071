extension JSONValue {
    /// JSON text for this value. Strings are escaped (control characters as `\uXXXX` or the
    /// short escapes), numbers keep their exact text, and object members keep their order
    /// unless `sortedKeys` is set. `pretty` indents nested containers by two spaces.
    public func serialized(pretty: Bool = false, sortedKeys: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty, sortedKeys: sortedKeys)
        writer.write(self, indent: 0)
        return writer.output
    }
}
