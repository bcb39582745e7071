import Foundation
import JSONSchema

/// `{{input}}` and `{{input.FIELD.FIELD…}}` in a command task's arguments: replaced by the
/// run's input, or by the value at a dotted path into it, before the program starts.
///
/// The rule:
/// - A reference is `{{`, optional spaces, `input` or `input.` and field names separated by
///   dots, optional spaces, `}}`. A field name is any text without `.`, `{` or `}`; a name of
///   digits picks an item of an array, as in a JSON pointer (`0`, `12`; not `01`, `+1` or
///   `-0`). Any other `{{…}}` is left as written.
/// - A string is put in as it is; any other value (number, boolean, null, object, array) as
///   its JSON text.
/// - A field the input does not have fails the run, saying which; nothing is started.
/// - No shell sees the arguments unless the task says `"shell": true`; then each value goes
///   into the shell line single-quoted (one word, never interpreted by the shell).
/// - At settings time, a reference to a field the task's `"input"` schema does not declare
///   (in its `properties`) is an error at the argument's pointer.
package enum InputReferences {
    /// One reference in an argument.
    package struct Reference: Equatable {
        package var range: Range<String.Index>
        /// The field names after `input` (empty: the whole input).
        package var path: [String]

        /// As written in a message: `{{input.a.b}}`.
        package var text: String { "{{" + (["input"] + path).joined(separator: ".") + "}}" }

        /// The path as a JSON pointer into the input (`/a/b`).
        package var pointer: String { path.map { "/" + JSONPointer.escape($0) }.joined() }
    }

    /// A reference the input cannot fill.
    package struct Missing: Error {
        package var message: String
    }

    /// The references in `argument`, in order; a malformed one (an empty field name) comes
    /// back as a problem.
    package static func references(in argument: String) -> (references: [Reference], problems: [String]) {
        var found: [Reference] = []
        var problems: [String] = []
        var searchFrom = argument.startIndex
        while let open = argument.range(of: "{{", range: searchFrom..<argument.endIndex),
              let close = argument.range(of: "}}", range: open.upperBound..<argument.endIndex) {
            let inner = argument[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            guard inner == "input" || inner.hasPrefix("input."), !inner.contains("{") else {
                searchFrom = open.upperBound
                continue
            }
            let path = inner.split(separator: ".", omittingEmptySubsequences: false).dropFirst().map(String.init)
            if path.contains(where: \.isEmpty) {
                problems.append("{{\(inner)}} has an empty field name; write {{input.FIELD}} or {{input.FIELD.INNER}}")
            } else {
                found.append(Reference(range: open.lowerBound..<close.upperBound, path: path))
            }
            searchFrom = close.upperBound
        }
        return (found, problems)
    }

    /// `argument` with its references replaced by their values in `input`; with `quoted`,
    /// each value single-quoted for `/bin/sh`. `index`: the argument's place, for the message.
    package static func substitute(_ argument: String, index: Int, input: JSONValue, quoted: Bool) -> Result<String, Missing> {
        let references = references(in: argument).references
        guard !references.isEmpty else { return .success(argument) }
        var result = ""
        var position = argument.startIndex
        for reference in references {
            result += argument[position..<reference.range.lowerBound]
            var value = input
            for (depth, field) in reference.path.enumerated() {
                let next: JSONValue?
                if let object = value.objectValue {
                    next = object[field]
                } else if let items = value.arrayValue, let i = JSONPointer.arrayIndex(field), i < items.count {
                    next = items[i]
                } else {
                    next = nil
                }
                guard let next else {
                    let parent = reference.path.prefix(depth).map { "/" + JSONPointer.escape($0) }.joined()
                    return .failure(Missing(message: "the command's argument \(index) refers to \(reference.text), but the run's input has no \"\(field)\" \(parent.isEmpty ? "at its top level" : "in \(parent)"); give it in the input (or make it required in the task's \"input\" schema so that such a request is refused)"))
                }
                value = next
            }
            let text = value.stringValue ?? value.serialized()
            if text.utf8.contains(0) {
                return .failure(Missing(message: "the command's argument \(index) refers to \(reference.text), whose value holds a NUL character, which no program argument can carry"))
            }
            result += quoted ? shellQuoted(text) : text
            position = reference.range.upperBound
        }
        result += argument[position...]
        return .success(result)
    }

    /// `text` as one single-quoted `/bin/sh` word.
    package static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Why `reference` names a field `schema` does not declare, or nil (also when the schema
    /// says nothing about that level: no `properties`, a `$ref`, a combination).
    package static func undeclared(_ reference: Reference, in schema: JSONValue) -> String? {
        var node = schema
        for (depth, field) in reference.path.enumerated() {
            if let properties = node["properties"]?.objectValue {
                guard let inner = properties[field] else {
                    let declared = properties.keys.sorted()
                    let at = reference.path.prefix(depth).joined(separator: ".")
                    return "\(reference.text) refers to \"\(field)\", which the task's \"input\" schema does not declare\(at.isEmpty ? "" : " in \"\(at)\"")\(Suggestions.hint(for: field, in: declared)) (declared: \(declared.isEmpty ? "none" : declared.joined(separator: ", "))); declare it under \"properties\" or fix the reference"
                }
                node = inner
            } else if Int(field) != nil, let items = node["items"], items.objectValue != nil {
                node = items
            } else {
                return nil
            }
        }
        return nil
    }
}
