import AgentTestSupport
import Foundation
import Testing

/// Every public declaration of the module SDK (AgentModuleKit) has a `///` doc comment: what a
/// module author reads in their editor and in DocC. Exempt are only the members that implement
/// a standard library protocol's requirement (`==`, `hash(into:)`, a collection's indices…),
/// whose documentation is the protocol's.
@Suite(.ownThreads) struct PublicSymbolDocumentationTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SDK/Sources/AgentModuleKit").path

    /// Requirements of Equatable, Hashable, Comparable, Collection, AsyncSequence and
    /// CustomStringConvertible, matched at the start of the declaration after `public`.
    static let standardRequirements = [
        "static func ==", "static func <", "func hash(into", "var startIndex", "var endIndex", "var indices", "var count",
        "subscript(position", "func index(after", "func withContiguousStorageIfAvailable", "typealias Element", "typealias Index",
        "typealias AsyncIterator", "typealias Indices", "init(arrayLiteral", "func makeAsyncIterator", "mutating func next", "func next", "var description", "var debugDescription",
    ]

    /// `file:line: declaration` of each public declaration without a doc comment above it
    /// (attributes between are skipped; `public extension` and `public import` are not declarations).
    static func undocumented(in directory: String) throws -> [String] {
        let files = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }.sorted()
        var found: [String] = []
        for file in files {
            let lines = try String(contentsOfFile: directory + "/" + file, encoding: .utf8).components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                var text = Substring(line.trimmingCharacters(in: .whitespaces))
                while text.hasPrefix("@"), let space = text.firstIndex(of: " ") { text = text[text.index(after: space)...] }
                guard text.hasPrefix("public ") || text.hasPrefix("open ") else { continue }
                let declaration = text.drop { $0 != " " }.dropFirst()
                if declaration.hasPrefix("extension ") || declaration.hasPrefix("import ") { continue }
                if standardRequirements.contains(where: { declaration.hasPrefix($0) }) { continue }
                var above = index - 1
                while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
                let comment = above >= 0 ? lines[above].trimmingCharacters(in: .whitespaces) : ""
                if !comment.hasPrefix("///") && !comment.hasSuffix("*/") { found.append("\(file):\(index + 1): \(text)") }
            }
        }
        return found
    }

    @Test func everyPublicDeclarationOfTheSDKHasADocComment() throws {
        let missing = try Self.undocumented(in: Self.sources)
        #expect(missing.isEmpty, "\(missing.count) public declarations of AgentModuleKit have no /// comment:\n\(missing.joined(separator: "\n"))")
    }

    /// The check itself finds what it should, and exempts what it should.
    @Test func theCheckFindsAnUndocumentedDeclarationBehindAttributes() throws {
        let folder = NSTemporaryDirectory() + "sdk-doc-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        /// Documented.
        public struct A: Equatable {
            @inlinable public var plain: Int { 1 }
            /// Documented.
            @discardableResult
            public func documented() -> Int { 1 }
            public static func == (lhs: A, rhs: A) -> Bool { true }
        }
        public extension A {}
        """.write(toFile: folder + "/A.swift", atomically: true, encoding: .utf8)
        #expect(try Self.undocumented(in: folder) == ["A.swift:3: public var plain: Int { 1 }"])
    }
}
