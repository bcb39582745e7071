/// Edits JSON text in place, keeping the author's formatting: everything an edit does not
/// change stays byte for byte as written (key order, whitespace, indentation, line endings,
/// how numbers and strings are spelt), and what an edit adds is laid out like its siblings.
///
/// ```swift
/// var editor = try JSONTextEditor(text)
/// try editor.append("weather", toArrayAt: "/enabled_modules")
/// try editor.setMember("station", to: ["type": "weather_feed"], inObjectAt: "/processes")
/// let edited = editor.text
/// ```
///
/// Layout of what is added: in an object or array written on one line, new entries go on that
/// line, separated as its entries are (`, ` or `,`, `": "` or `":"`); in one written over
/// several lines, each new entry goes on a line of its own, indented like the last entry. A new
/// object or array value is written on one line when the entry before it was, else expanded
/// with the document's indentation unit (two or four spaces, a tab: whatever the document
/// uses). An empty object gains its first member on a line of its own when the object around
/// it is written over several lines. Line endings follow the document (`\n` or `\r\n`).
public struct JSONTextEditor: Sendable {
    /// The document's UTF-8 bytes, as edited so far.
    public private(set) var bytes: [UInt8]

    /// The document as edited so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The document's value, as edited so far.
    public var value: JSONValue {
        // The text is valid JSON at every step (checked at init, kept so by each edit).
        (try? JSONValue.parse(bytes)) ?? .null
    }

    /// Starts from JSON text; throws where it is not valid JSON.
    public init(_ text: String) throws(JSONParseError) {
        try self.init(bytes: Array(text.utf8))
    }

    /// Starts from UTF-8 JSON bytes; throws where they are not valid JSON.
    public init(bytes: [UInt8]) throws(JSONParseError) {
        _ = try JSONValue.parse(bytes)
        self.bytes = bytes
    }

    // MARK: Edits

    /// Appends `value` as the last item of the array at `pointer`.
    public mutating func append(_ value: JSONValue, toArrayAt pointer: String) throws(JSONEditError) {
        let layout = Layout(bytes)
        let array = try layout.node(at: pointer, expecting: .array)
        try insert(element: value, key: nil, into: array, layout: layout)
    }

    /// Inserts `value` as the item at `index` of the array at `pointer` (the items from there
    /// move one on; `index` equal to the count appends), laid out like the item it goes before.
    public mutating func insert(_ value: JSONValue, at index: Int, intoArrayAt pointer: String) throws(JSONEditError) {
        let layout = Layout(bytes)
        let array = try layout.node(at: pointer, expecting: .array)
        let elements = array.elementRanges
        guard index >= 0, index <= elements.count else {
            throw JSONEditError(code: "no_such_item", pointer: pointer, message: "the array has \(elements.count) item(s); an item can go at 0 to \(elements.count), not \(index)")
        }
        guard index < elements.count else { return try insert(element: value, key: nil, into: array, layout: layout) }
        let at = elements[index].lowerBound
        if layout.isMultiline(array) {
            let indent = layout.lineIndent(at: at)
            splice(at..<at, with: layout.render(value, style: layout.styleForNewValue(in: array, indent: indent)) + "," + layout.newline + indent)
        } else {
            splice(at..<at, with: layout.render(value, style: .inline) + "," + layout.comma(in: array))
        }
    }

    /// Sets the member `key` of the object at `pointer`: an existing member's value is
    /// replaced where it stands; a new member goes after the last one.
    public mutating func setMember(_ key: String, to value: JSONValue, inObjectAt pointer: String) throws(JSONEditError) {
        let layout = Layout(bytes)
        let object = try layout.node(at: pointer, expecting: .object)
        if let member = object.members.last(where: { $0.key == key }) {
            replace(member.value, with: value, layout: layout)
        } else {
            try insert(element: value, key: key, into: object, layout: layout)
        }
    }

    /// Removes the member `key` of the object at `pointer` (with its comma and the whitespace
    /// that led to it). Throws if there is no such member.
    public mutating func removeMember(_ key: String, fromObjectAt pointer: String) throws(JSONEditError) {
        let layout = Layout(bytes)
        let object = try layout.node(at: pointer, expecting: .object)
        guard let index = object.members.lastIndex(where: { $0.key == key }) else {
            throw JSONEditError(code: "no_such_member", pointer: pointer, message: "the object has no member \"\(key)\"")
        }
        remove(elementAt: index, of: object)
    }

    /// Removes the item at `index` of the array at `pointer`.
    public mutating func removeItem(at index: Int, fromArrayAt pointer: String) throws(JSONEditError) {
        let layout = Layout(bytes)
        let array = try layout.node(at: pointer, expecting: .array)
        guard array.items.indices.contains(index) else {
            throw JSONEditError(code: "no_such_item", pointer: pointer, message: "the array has \(array.items.count) item(s); there is no index \(index)")
        }
        remove(elementAt: index, of: array)
    }

    /// Replaces the value at `pointer` (any value, the whole document for `""`).
    public mutating func replaceValue(at pointer: String, with value: JSONValue) throws(JSONEditError) {
        let layout = Layout(bytes)
        let node = try layout.node(at: pointer, expecting: nil)
        replace(node, with: value, layout: layout)
    }

    // MARK: Splicing

    private mutating func splice(_ range: Range<Int>, with text: String) {
        bytes.replaceSubrange(range, with: Array(text.utf8))
    }

    private mutating func replace(_ node: Layout.Node, with value: JSONValue, layout: Layout) {
        let style: Layout.Style
        if layout.spansLines(node.start..<node.end) {
            style = .expanded(indent: layout.lineIndent(at: node.start))
        } else if node.kind == .scalar, let container = layout.container(of: node), layout.isMultiline(container) {
            style = layout.styleForNewValue(in: container, indent: layout.lineIndent(at: node.start))
        } else {
            style = .inline
        }
        splice(node.start..<node.end, with: layout.render(value, style: style))
    }

    private mutating func insert(element value: JSONValue, key: String?, into container: Layout.Node, layout: Layout) throws(JSONEditError) {
        let prefix = key.map { layout.render(.string($0), style: .inline) + layout.colon(in: container) } ?? ""
        let elements = container.elementRanges
        if let last = elements.last {
            if layout.isMultiline(container) {
                let indent = layout.lineIndent(at: last.lowerBound)
                let style = layout.styleForNewValue(in: container, indent: indent)
                splice(last.upperBound..<last.upperBound,
                       with: "," + layout.newline + indent + prefix + layout.render(value, style: style))
            } else {
                splice(last.upperBound..<last.upperBound, with: "," + layout.comma(in: container) + prefix + layout.render(value, style: .inline))
            }
            return
        }
        let (open, close) = container.kind == .object ? ("{", "}") : ("[", "]")
        let outer = layout.container(of: container)
        let expand = layout.spansLines(container.start..<container.end)
            || (container.kind == .object && (outer.map(layout.isMultiline) ?? false))
        if expand {
            let indent = layout.lineIndent(at: container.start)
            let inner = indent + layout.indentUnit
            splice(container.start..<container.end,
                   with: open + layout.newline + inner + prefix + layout.render(value, style: .expanded(indent: inner)) + layout.newline + indent + close)
        } else {
            splice(container.start..<container.end, with: open + prefix + layout.render(value, style: .inline) + close)
        }
    }

    private mutating func remove(elementAt index: Int, of container: Layout.Node) {
        let elements = container.elementRanges
        if elements.count == 1 {
            // The only entry: an empty container, written `{}` / `[]`.
            splice(container.start + 1..<container.end - 1, with: "")
        } else if index < elements.count - 1 {
            // Up to where the next entry starts: its indentation stays.
            splice(elements[index].lowerBound..<elements[index + 1].lowerBound, with: "")
        } else {
            // The last one: from the end of the entry before it (its comma goes too).
            splice(elements[index - 1].upperBound..<elements[index].upperBound, with: "")
        }
    }
}
