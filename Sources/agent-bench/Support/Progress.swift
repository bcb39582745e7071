import Foundation

/// Progress lines on stderr, so that stdout carries only the table (or the JSON).
enum Progress {
    nonisolated(unsafe) static var enabled = true

    static func say(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("agent-bench: \(text)\n".utf8))
    }
}
