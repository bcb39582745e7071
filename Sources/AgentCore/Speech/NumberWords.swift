/// Numbers as the recogniser says them ("twenty five") and as the adapters read them ("25"):
/// the grammar speaks the adapters' digits as words, and the transcript gets its digits back.
enum NumberWords {
    static let units = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
    static let tens = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

    /// Whether `word` is a number (digits or a number word).
    static func isNumber(_ word: String) -> Bool {
        (!word.isEmpty && word.allSatisfy(\.isASCIIDigit)) || units.contains(word) || tens.contains(word) || word == "hundred"
    }

    /// The JSGF rule for a number from zero to a hundred.
    static let rule = "<number> = " + (units + ["a hundred", "one hundred"]).joined(separator: " | ")
        + " | (" + tens.joined(separator: " | ") + ") [" + units[1...9].joined(separator: " | ") + "];"

    /// `text` with spoken numbers as digits: "the last twenty five minutes" → "the last 25 minutes",
    /// "a hundred" → "100".
    static func digits(in text: String) -> String {
        let words = text.split(separator: " ").map(String.init)
        var output: [String] = []
        var pending: Int?
        func flush() { if let value = pending { output.append(String(value)) }; pending = nil }
        for (index, word) in words.enumerated() {
            if let unit = units.firstIndex(of: word) {
                // "twenty" + "five" → 25; "five" after "five" starts a new number.
                if let value = pending, value >= 20, value % 10 == 0, value < 100, (1...9).contains(unit) { pending = value + unit } else { flush(); pending = unit }
            } else if let ten = tens.firstIndex(of: word) {
                flush()
                pending = (ten + 2) * 10
            } else if word == "hundred" {
                let value = pending.flatMap { (1...9).contains($0) ? $0 : nil } ?? 1
                if pending == nil || value != pending { flush() }
                pending = value * 100
            } else if word == "a", index + 1 < words.count, words[index + 1] == "hundred" {
                flush()
            } else {
                flush()
                output.append(word)
            }
        }
        flush()
        return output.joined(separator: " ")
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
