/// The `llm` adapter's system prompt with its placeholders found once, when the adapter is made:
/// a message's prompt is then its pieces joined in one pass. Five `replacingOccurrences` per
/// message went through Foundation's `NSString` and cost the chat path ~120 µs a message
/// (agent-bench figure 17, `perf`). A value filled in is not searched again: a user named
/// `{{now}}` stays so. Text between `{{` and `}}` that names no placeholder stays as written.
struct PromptTemplate {
    enum Placeholder: String, CaseIterable {
        case user, now, tools, conversation, preferences
    }

    private enum Piece {
        case text(Substring)
        case value(Placeholder)
    }

    private let pieces: [Piece]

    init(_ template: String) {
        var pieces: [Piece] = []
        var rest = template[...]
        while let open = rest.firstRange(of: "{{") {
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else { break }
            let name = rest[open.upperBound..<close.lowerBound]
            guard let placeholder = Placeholder(rawValue: String(name)) else {
                // Not one of ours ("{{x}}", or "{{{user}}" whose first brace is text): the first
                // brace stays text and the search goes on after it.
                let next = rest.index(after: open.lowerBound)
                pieces.append(.text(rest[..<next]))
                rest = rest[next...]
                continue
            }
            if open.lowerBound > rest.startIndex { pieces.append(.text(rest[..<open.lowerBound])) }
            pieces.append(.value(placeholder))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.text(rest)) }
        self.pieces = pieces
    }

    /// The prompt with each placeholder's `value` (asked only for those the template has).
    func render(_ value: (Placeholder) -> String) -> String {
        var prompt = ""
        for piece in pieces {
            switch piece {
            case .text(let text): prompt += text
            case .value(let placeholder): prompt += value(placeholder)
            }
        }
        return prompt
    }
}
