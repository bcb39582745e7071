import JSONSchema

/// The bound on how deeply a run's input may nest, checked when the run is asked for (by a
/// front, a trigger's event or a workflow step). The store keeps a run as JSON and every
/// front answers it inside a few more levels (`{"runs": [{"input": …}]}`); the JSON reader
/// takes at most ``JSONParser``'s 512 levels, so an input of ~510 levels was accepted and
/// then made `task runs` and `task show` fail for as long as the run was kept. Refused at
/// submission instead, with the pointer of the first value past the bound.
public enum InputNesting {
    /// Arrays and objects inside one another in a run's input: far beyond any real input,
    /// far below the reader's 512 with room for the records and answers around it.
    public static let deepest = 100

    /// Why `input` may not be a run's input (`/input…` pointer and message), or nil.
    public static func problem(_ input: JSONValue, limit: Int = deepest) -> (pointer: String, message: String)? {
        guard let path = pathBeyond(input, limit: limit) else { return nil }
        let pointer = "/input" + path.map { "/" + JSONPointer.escape($0) }.joined()
        return (pointer, "the input nests arrays and objects more than \(limit) levels deep (found a level \(limit + 1) at \(pointer)); "
            + "at most \(limit) are accepted, so that the run's record stays readable: flatten the input, or pass a file's path instead")
    }

    /// An output as a run keeps it: one that nests arrays and objects more than ``deepest``
    /// levels is kept as its JSON text (a string), which every reader takes. A command that
    /// printed `[[[…]]]` 510 levels deep had its output kept as JSON, and then `task runs` failed
    /// for every run and the run itself was read by nothing.
    public static func keptOutput(_ output: JSONValue) -> JSONValue {
        guard output.isContainer, pathBeyond(output, limit: deepest) != nil else { return output }
        return .string(output.serialized())
    }

    /// The path (tokens) to the first array or object at level `limit + 1`, or nil. Recurses
    /// at most `limit + 1` levels, whatever the value holds.
    package static func pathBeyond(_ value: JSONValue, limit: Int) -> [String]? {
        switch value {
        case .array(let items):
            guard limit > 0 else { return [] }
            // Only containers nest: a scalar member is passed over without a call.
            for index in items.indices where items[index].isContainer {
                if let rest = pathBeyond(items[index], limit: limit - 1) { return [String(index)] + rest }
            }
        case .object(let object):
            guard limit > 0 else { return [] }
            for (key, item) in object where item.isContainer {
                if let rest = pathBeyond(item, limit: limit - 1) { return [key] + rest }
            }
        default:
            break
        }
        return nil
    }
}
