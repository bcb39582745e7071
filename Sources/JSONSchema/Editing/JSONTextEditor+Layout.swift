extension JSONTextEditor {
    /// Where each value of a document lies (byte offsets) and how the document is laid out:
    /// read again before each edit.
    struct Layout {
        enum Kind { case object, array, scalar }

        final class Node {
            let kind: Kind
            let start: Int
            var end = 0
            /// Objects: key, where the key starts, the value.
            var members: [(key: String, keyStart: Int, value: Node)] = []
            /// Arrays.
            var items: [Node] = []
            weak var parent: Node?

            init(_ kind: Kind, start: Int) {
                self.kind = kind
                self.start = start
            }

            /// Each entry from its first byte (a member's key) to the end of its value.
            var elementRanges: [Range<Int>] {
                kind == .object ? members.map { $0.keyStart..<$0.value.end } : items.map { $0.start..<$0.end }
            }
        }

        /// How a value is written: on one line, or expanded below a line indented `indent`.
        enum Style {
            case inline
            case expanded(indent: String)
        }

        let bytes: [UInt8]
        let root: Node
        let newline: String
        let indentUnit: String
        /// The document's `": "` (or `":"`, …) and the space after a comma on one line.
        private let documentColon: String
        private let documentComma: String

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            var scanner = Scanner(bytes: bytes)
            root = scanner.value(parent: nil)
            newline = Self.contains(bytes, [13, 10]) ? "\r\n" : "\n"
            indentUnit = Self.indentUnit(bytes)
            var colon: String?
            var comma: String?
            Self.visit(root) { node in
                if colon == nil, let member = node.members.first {
                    colon = Self.text(bytes, Self.endOfString(bytes, from: member.keyStart)..<member.value.start)
                }
                let ranges = node.elementRanges
                if comma == nil, ranges.count > 1, !Self.spans(bytes, node.start..<node.end) {
                    comma = Self.afterComma(bytes, ranges[0].upperBound..<ranges[1].lowerBound)
                }
            }
            documentColon = colon ?? ": "
            documentComma = comma ?? (documentColon.hasSuffix(" ") ? " " : "")
        }

        // MARK: Finding values

        func node(at pointer: String, expecting kind: Kind?) throws(JSONEditError) -> Node {
            guard let parsed = JSONPointer(pointer) else {
                throw JSONEditError(code: "invalid_pointer", pointer: pointer, message: "not a JSON pointer; expected \"\" or /token/…")
            }
            var node = root
            var walked = ""
            for token in parsed.tokens {
                walked += "/" + JSONPointer.escape(token)
                switch node.kind {
                case .object:
                    guard let member = node.members.last(where: { $0.key == token }) else {
                        throw JSONEditError(code: "no_such_value", pointer: pointer, message: "no value at \(walked): the object has no member \"\(token)\"")
                    }
                    node = member.value
                case .array:
                    guard let index = Int(token), node.items.indices.contains(index) else {
                        throw JSONEditError(code: "no_such_value", pointer: pointer, message: "no value at \(walked): the array has \(node.items.count) item(s)")
                    }
                    node = node.items[index]
                case .scalar:
                    throw JSONEditError(code: "no_such_value", pointer: pointer, message: "no value at \(walked): the value holding it is not an object or an array")
                }
            }
            if let kind, node.kind != kind {
                let found = Self.text(bytes, node.start..<min(node.end, node.start + 20))
                throw JSONEditError(code: kind == .object ? "not_an_object" : "not_an_array", pointer: pointer,
                                    message: "expected \(kind == .object ? "an object" : "an array"), found \(found)\(node.end - node.start > 20 ? "…" : "")")
            }
            return node
        }

        func container(of node: Node) -> Node? { node.parent }

        // MARK: Reading the layout

        /// Whether the container's entries are on lines of their own (an empty one: whether it
        /// spans lines).
        func isMultiline(_ container: Node) -> Bool {
            guard let first = container.elementRanges.first else { return spansLines(container.start..<container.end) }
            return spansLines(container.start..<first.lowerBound)
        }

        func spansLines(_ range: Range<Int>) -> Bool { Self.spans(bytes, range) }

        /// The whitespace that starts the line holding `offset`.
        func lineIndent(at offset: Int) -> String {
            var start = offset
            while start > 0, bytes[start - 1] != 10 { start -= 1 }
            var end = start
            while end < bytes.count, bytes[end] == 32 || bytes[end] == 9 { end += 1 }
            return Self.text(bytes, start..<end)
        }

        /// `": "` as this object's members write it (the shortest, where spaces align values),
        /// else as the document does.
        func colon(in container: Node) -> String {
            let colons = container.members.map { Self.text(bytes, Self.endOfString(bytes, from: $0.keyStart)..<$0.value.start) }
            return colons.min { $0.utf8.count < $1.utf8.count } ?? documentColon
        }

        /// The space after a comma in this one-line container, else the document's.
        func comma(in container: Node) -> String {
            let ranges = container.elementRanges
            guard ranges.count > 1 else { return documentComma }
            return Self.afterComma(bytes, ranges[ranges.count - 2].upperBound..<ranges[ranges.count - 1].lowerBound)
        }

        /// A new value in a multi-line container is written like the entry before it: on one
        /// line if that entry's value is an object or array written on one line.
        func styleForNewValue(in container: Node, indent: String) -> Style {
            let values = container.kind == .object ? container.members.map(\.value) : container.items
            if let last = values.last(where: { $0.kind != .scalar }), !spansLines(last.start..<last.end) { return .inline }
            return .expanded(indent: indent)
        }

        // MARK: Writing values

        func render(_ value: JSONValue, style: Style) -> String {
            switch (value, style) {
            case (.object(let object), _) where object.isEmpty: return "{}"
            case (.array(let items), _) where items.isEmpty: return "[]"
            case (.object(let object), .inline):
                let colon = documentColon, comma = documentComma
                return "{" + object.entries.map { render(.string($0.key), style: .inline) + colon + render($0.value, style: .inline) }
                    .joined(separator: "," + comma) + "}"
            case (.array(let items), .inline):
                return "[" + items.map { render($0, style: .inline) }.joined(separator: "," + documentComma) + "]"
            case (.object(let object), .expanded(let indent)):
                let inner = indent + indentUnit
                return "{" + object.entries.map {
                    newline + inner + render(.string($0.key), style: .inline) + documentColon + render($0.value, style: .expanded(indent: inner))
                }.joined(separator: ",") + newline + indent + "}"
            case (.array(let items), .expanded(let indent)):
                let inner = indent + indentUnit
                return "[" + items.map { newline + inner + render($0, style: .expanded(indent: inner)) }.joined(separator: ",") + newline + indent + "]"
            default:
                return value.serialized()
            }
        }

        // MARK: Helpers

        static func visit(_ node: Node, _ body: (Node) -> Void) {
            body(node)
            for member in node.members { visit(member.value, body) }
            for item in node.items { visit(item, body) }
        }

        static func text(_ bytes: [UInt8], _ range: Range<Int>) -> String {
            String(decoding: bytes[range], as: UTF8.self)
        }

        static func spans(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
            bytes[range].contains(10)
        }

        static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
            guard bytes.count >= pattern.count else { return false }
            for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
                if Array(bytes[start..<start + pattern.count]) == pattern { return true }
            }
            return false
        }

        /// One past the closing quote of the string starting at `start`.
        static func endOfString(_ bytes: [UInt8], from start: Int) -> Int {
            var position = start + 1
            while position < bytes.count, bytes[position] != 34 {
                position += bytes[position] == 92 ? 2 : 1
            }
            return position + 1
        }

        /// The whitespace after the comma between two entries on one line.
        static func afterComma(_ bytes: [UInt8], _ between: Range<Int>) -> String {
            guard let comma = bytes[between].firstIndex(of: 44) else { return " " }
            return text(bytes, comma + 1..<between.upperBound)
        }

        /// The document's indentation unit: the leading whitespace of the first indented line
        /// (the first level of a pretty-printed document), else two spaces.
        static func indentUnit(_ bytes: [UInt8]) -> String {
            var index = 0
            while index < bytes.count {
                if bytes[index] == 10 {
                    var end = index + 1
                    while end < bytes.count, bytes[end] == 32 || bytes[end] == 9 { end += 1 }
                    if end > index + 1, end < bytes.count, bytes[end] != 10, bytes[end] != 13 {
                        return text(bytes, index + 1..<end)
                    }
                }
                index += 1
            }
            return "  "
        }
    }

    /// Finds where values lie in valid JSON (the editor checked it is valid).
    struct Scanner {
        let bytes: [UInt8]
        var position = 0

        mutating func skipWhitespace() {
            while position < bytes.count, [32, 9, 10, 13].contains(bytes[position]) { position += 1 }
        }

        mutating func value(parent: Layout.Node?) -> Layout.Node {
            skipWhitespace()
            let start = position
            let node: Layout.Node
            switch bytes[position] {
            case 123:  // {
                node = Layout.Node(.object, start: start)
                position += 1
                skipWhitespace()
                while bytes[position] != 125 {
                    let keyStart = position
                    position = Layout.endOfString(bytes, from: keyStart)
                    let key = (try? JSONValue.parse(bytes[keyStart..<position]))?.stringValue ?? ""
                    skipWhitespace()
                    position += 1  // :
                    node.members.append((key, keyStart, value(parent: node)))
                    skipWhitespace()
                    if bytes[position] == 44 {
                        position += 1
                        skipWhitespace()
                    }
                }
                position += 1
            case 91:  // [
                node = Layout.Node(.array, start: start)
                position += 1
                skipWhitespace()
                while bytes[position] != 93 {
                    node.items.append(value(parent: node))
                    skipWhitespace()
                    if bytes[position] == 44 {
                        position += 1
                        skipWhitespace()
                    }
                }
                position += 1
            case 34:  // "
                node = Layout.Node(.scalar, start: start)
                position = Layout.endOfString(bytes, from: start)
            default:
                node = Layout.Node(.scalar, start: start)
                while position < bytes.count, ![44, 125, 93, 32, 9, 10, 13].contains(bytes[position]) { position += 1 }
            }
            node.end = position
            node.parent = parent
            return node
        }
    }
}
