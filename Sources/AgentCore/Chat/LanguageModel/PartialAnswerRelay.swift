import JSONSchema

/// The text of an answer as the language model streams it, sent on to the supervisor as
/// `chat.partial` events ({"id": MESSAGE, "text": PIECE}) for the front that asked for pieces.
/// Bounded: a piece is cut to ``maximumPiece`` bytes and a message relays at most
/// ``maximumTotal`` bytes in at most ``maximumPieces`` events; past that nothing more is relayed
/// (the reply still carries the whole answer).
final class PartialAnswerRelay {
    static let maximumPiece = 16 << 10
    static let maximumTotal = 1 << 20
    static let maximumPieces = 8192

    private let id: String
    private let emit: (JSONValue) -> Void
    private(set) var bytes = 0
    private(set) var count = 0

    init(id: String, emit: @escaping (JSONValue) -> Void) {
        self.id = id
        self.emit = emit
    }

    func relay(_ piece: String) {
        guard !id.isEmpty, count < Self.maximumPieces, bytes < Self.maximumTotal else { return }
        var text = piece
        if text.utf8.count > Self.maximumPiece { text = String(decoding: text.utf8.prefix(Self.maximumPiece), as: UTF8.self) }
        guard bytes + text.utf8.count <= Self.maximumTotal else {
            // Past the bound: no more pieces, whatever comes (a cut mid-text would mislead).
            bytes = Self.maximumTotal
            return
        }
        bytes += text.utf8.count
        count += 1
        emit(["id": .string(id), "text": .string(text)])
    }
}
