/// A JSON Pointer (RFC 6901), e.g. `/processes/trades/interval`.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    /// The unescaped reference tokens, outermost first.
    public var tokens: [String]

    /// The pointer to the whole document (`""`).
    public init() {
        tokens = []
    }

    /// Creates a pointer from unescaped reference tokens.
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses pointer text such as `/a/b~1c`. Returns `nil` when the text is not empty and does
    /// not start with `/`, or when it contains an invalid escape (`~` not followed by `0` or `1`).
    public init?(_ text: String) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        // Scalars, not graphemes: a token may begin with a combining mark, which would make
        // one `Character` of the `/` before it.
        guard text.unicodeScalars.first == "/" else { return nil }
        var parsed: [String] = []
        for raw in text.unicodeScalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let token = JSONPointer.unescape(String(raw)) else { return nil }
            parsed.append(token)
        }
        tokens = parsed
    }

    /// Escapes a reference token: `~` becomes `~0` and `/` becomes `~1`.
    public static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
            return token
        }
        var result = ""
        for character in token.unicodeScalars {
            switch character {
            case "~": result += "~0"
            case "/": result += "~1"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// Unescapes a reference token (`~1` to `/`, `~0` to `~`); `nil` for an invalid escape.
    public static func unescape(_ token: String) -> String? {
        guard token.utf8.contains(UInt8(ascii: "~")) else { return token }
        var result = ""
        var iterator = token.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "~" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch iterator.next() {
            case "0": result += "~"
            case "1": result += "/"
            default: return nil
            }
        }
        return result
    }

    /// A pointer to the member `key` of the value this pointer designates.
    public func appending(_ key: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [key])
    }

    /// A pointer to the element at `index` of the value this pointer designates.
    public func appending(index: Int) -> JSONPointer {
        JSONPointer(tokens: tokens + [String(index)])
    }

    /// The pointer to the parent value; `nil` for the root pointer.
    public var parent: JSONPointer? {
        tokens.isEmpty ? nil : JSONPointer(tokens: Array(tokens.dropLast()))
    }

    /// The escaped pointer text (`""` for the root).
    public var description: String {
        var text = ""
        for token in tokens {
            text += "/"
            text += JSONPointer.escape(token)
        }
        return text
    }

    /// The value this pointer designates inside `document`, or `nil` when a token does not
    /// name an existing member or a valid array index (no leading zeros, no `-`).
    public func resolve(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let index = JSONPointer.arrayIndex(token), index < array.count else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }

    /// Parses an array index token: decimal digits without leading zeros.
    public static func arrayIndex(_ token: String) -> Int? {
        let utf8 = token.utf8
        guard let first = utf8.first, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        if first == UInt8(ascii: "0") && utf8.count > 1 { return nil }
        return Int(token)
    }
}

extension JSONValue {
    /// The value at `pointer` inside this value, or `nil` when it does not exist.
    public subscript(pointer pointer: JSONPointer) -> JSONValue? {
        pointer.resolve(in: self)
    }
}
