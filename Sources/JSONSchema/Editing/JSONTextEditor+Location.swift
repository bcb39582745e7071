extension JSONTextEditor {
    /// Where a JSON pointer lies in the text: the line and column (from 1) of the member's key
    /// (or the array item, or the whole document), for showing an error at its field.
    public struct Location: Sendable, Equatable {
        public var line: Int
        public var column: Int
        /// The part of the pointer the text has: the pointer itself, or its deepest ancestor
        /// when the pointer names something the text lacks (a missing required member).
        public var found: String
    }

    /// The location of `pointer` in the document; nil when it is not a JSON pointer.
    public func location(of pointer: String) -> Location? {
        guard let parsed = JSONPointer(pointer) else { return nil }
        let layout = Layout(bytes)
        var node = layout.root
        var offset = node.start
        var found: [String] = []
        for token in parsed.tokens {
            if node.kind == .object, let member = node.members.last(where: { $0.key == token }) {
                node = member.value
                offset = member.keyStart
            } else if node.kind == .array, let index = Int(token), node.items.indices.contains(index) {
                node = node.items[index]
                offset = node.start
            } else {
                break
            }
            found.append(token)
        }
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 10 {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1
        return Location(line: line, column: column, found: JSONPointer(tokens: found).description)
    }
}
