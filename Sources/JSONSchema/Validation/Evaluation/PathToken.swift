/// One step of an instance location or an evaluation path.
enum PathToken {
    case key(String)
    case index(Int)

    /// Renders tokens as an escaped JSON pointer.
    static func pointer(_ tokens: some Sequence<PathToken>) -> String {
        var text = ""
        for token in tokens {
            text += "/"
            switch token {
            case .key(let key): text += JSONPointer.escape(key)
            case .index(let index): text += String(index)
            }
        }
        return text
    }
}
