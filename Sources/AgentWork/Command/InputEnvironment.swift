import JSONSchema

/// The run's input as environment variables of its command: each top-level field of an object
/// input as `INPUT_<FIELD>` (the name upper-cased), a string as it is, any other value as its
/// JSON text. A shell line reads them as `"$INPUT_FILE"`: quoted by the script, never parsed
/// as shell code, wherever it stands in a word or in quotes.
///
/// Left out: a field whose name is not letters, digits and `_` (not starting with a digit), two
/// fields that upper-case alike (`a` and `A`), a value holding a NUL, a value over
/// ``largestValue`` bytes, and fields once ``largestTotal`` bytes are given (the kernel refuses
/// a program whose environment is too big); every field of an input of more than
/// ``mostFields`` fields. The whole input is always on the command's stdin.
package enum InputEnvironment {
    package static let prefix = "INPUT_"
    package static let largestValue = 64 * 1024
    package static let largestTotal = 256 * 1024
    /// Fields an input may have to be set as variables: the names are sorted and compared on
    /// the loop at each launch (80,000 of them held it ~0.15 s).
    package static let mostFields = 1024

    /// `INPUT_FILE` for `file`; nil for a name no variable can carry.
    package static func name(forField field: String) -> String? {
        guard let first = field.unicodeScalars.first, !("0"..."9").contains(first),
              field.unicodeScalars.allSatisfy({ $0.isASCII && ($0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)) })
        else { return nil }
        return prefix + field.uppercased()
    }

    /// The variables for `input` (none unless it is an object); `omitted`: why fields were left
    /// out for their size or their number, for the log (nil when none was).
    package static func variables(for input: JSONValue) -> (variables: [String: String], omitted: String?) {
        guard let object = input.objectValue else { return ([:], nil) }
        guard object.count <= mostFields else {
            return ([:], "\(object.count) fields, more than the \(mostFields) set as INPUT_*: none is")
        }
        var named: [String: [String]] = [:]
        for field in object.keys {
            if let name = name(forField: field) { named[name, default: []].append(field) }
        }
        var variables: [String: String] = [:]
        var omitted: [String] = []
        var total = 0
        for (name, fields) in named.sorted(by: { $0.key < $1.key }) where fields.count == 1 {
            guard let value = object[fields[0]] else { continue }
            // Measured before it is written or read: a field of megabytes costs nothing here.
            let length = value.stringValue.map(\.utf8.count) ?? value.serializedLength(atMost: largestValue)
            guard let length, length <= largestValue, total + length + name.utf8.count + 2 <= largestTotal else {
                omitted.append(fields[0])
                continue
            }
            let text = value.stringValue ?? value.serialized()
            guard !text.utf8.contains(0) else { continue }
            let size = length + name.utf8.count + 2
            total += size
            variables[name] = text
        }
        guard !omitted.isEmpty else { return (variables, nil) }
        let listed = omitted.sorted().prefix(10).joined(separator: ", ")
        return (variables, "\(listed)\(omitted.count > 10 ? " and \(omitted.count - 10) more" : "") too big for the environment; not set as INPUT_*")
    }
}
