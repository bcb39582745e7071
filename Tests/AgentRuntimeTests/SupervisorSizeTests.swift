import AgentTestSupport
import Foundation
import Testing

/// The design's bound on the composition root (DESIGN.md, Round 3): `Supervisor` composes and
/// supervises processes in at most 2,000 lines and 30 stored properties; what grows beyond
/// goes to a type of its own, not into another `Supervisor+Feature` file. Read from the source
/// tree, so that the bound cannot be crossed without a test failing (CI runs `swift test`, not
/// scripts/split/check.py).
@Suite(.ownThreads) struct SupervisorSizeTests {
    static let lineLimit = 2_000
    static let storedPropertyLimit = 30
    static let folder = TestPaths.repository + "/Sources/AgentRuntime/Supervision"

    @Test func theSupervisorStaysWithinItsLinesAndStoredProperties() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder)
            .filter { $0.hasPrefix("Supervisor") && $0.hasSuffix(".swift") }.sorted()
        #expect(files.contains("Supervisor.swift"), "no Supervisor.swift in \(Self.folder)")
        var lines = 0
        for file in files {
            lines += try String(contentsOfFile: Self.folder + "/" + file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count - 1
        }
        #expect(lines <= Self.lineLimit, "Supervisor*.swift hold \(lines) lines (at most \(Self.lineLimit)): move a responsibility into a type of its own")
        let source = try String(contentsOfFile: Self.folder + "/Supervisor.swift", encoding: .utf8)
        let stored = Self.storedProperties(of: "Supervisor", in: source)
        #expect(!stored.isEmpty, "found no stored property in the Supervisor class: the reading below no longer matches the source")
        #expect(stored.count <= Self.storedPropertyLimit,
                "Supervisor has \(stored.count) stored properties (at most \(Self.storedPropertyLimit)): \(stored.joined(separator: ", "))")
    }

    /// Nothing of the supervisor hides in a file the count above does not read.
    @Test func noSupervisorExtensionOutsideItsFiles() throws {
        let sources = TestPaths.repository + "/Sources"
        guard let walker = FileManager.default.enumerator(atPath: sources) else {
            Issue.record("cannot read \(sources)")
            return
        }
        var outside: [String] = []
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(".swift"), !(path.hasPrefix("AgentRuntime/Supervision/Supervisor")) else { continue }
            let text = try String(contentsOfFile: sources + "/" + path, encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("extension Supervisor ") || $0.hasPrefix("extension Supervisor:") || $0.hasPrefix("extension Supervisor{") }) {
                outside.append(path)
            }
        }
        #expect(outside.isEmpty, "extensions of Supervisor outside AgentRuntime/Supervision/Supervisor*.swift: \(outside)")
    }

    /// The reading itself: stored (`let`, `lazy var`, a `var` with a value or no body) are
    /// counted; computed ones, statics and those of nested types are not.
    @Test func theCountSeesStoredPropertiesOnly() {
        let source = """
        @LoopActor
        public final class Sample {
            public nonisolated let configuration: Int
            /// A comment with a let in it: let x = 1 { }
            private(set) lazy var parts = Parts(text: "a { brace", then: { [unowned self] in
                value
            })
            var flag = false
            package var count: Int?
            nonisolated(unsafe) let buffer = 1
            var computed: Int { 3 }
            public var disabled: [Int] {
                get { [] }
                set {}
            }
            static let shared = 1
            struct Nested { var inner = 0 }
            func work() { let local = 1; _ = local }
        }
        """
        #expect(Self.storedProperties(of: "Sample", in: source) == ["configuration", "parts", "flag", "count", "buffer"])
    }

    /// The stored properties declared in the body of class `name` (its first level), in order.
    static func storedProperties(of name: String, in source: String) -> [String] {
        var found: [String] = []
        var depth = 0
        var inside = false
        for rawLine in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = code(of: String(rawLine))
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !inside, trimmed.contains("class \(name) ") || trimmed.contains("class \(name):") || trimmed.hasSuffix("class \(name)") {
                inside = true
                depth = 0
            }
            if inside, depth == 1, let property = storedProperty(in: trimmed) { found.append(property) }
            for character in line {
                if character == "{" { depth += 1 } else if character == "}" { depth -= 1 }
            }
            if inside, depth == 0, line.contains("}") { break }
        }
        return found
    }

    /// The property a declaration line stores, or nil (not a property, computed or static).
    static func storedProperty(in line: String) -> String? {
        var words = line.split(separator: " ").map(String.init)
        while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal", "private", "fileprivate", "nonisolated", "lazy", "final", "weak", "unowned"].contains(where: { first == $0 || first.hasPrefix($0 + "(") }) {
            words.removeFirst()
        }
        guard words.count >= 2, words[0] == "let" || words[0] == "var" else { return nil }
        let name = String(words[1].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        let rest = line[line.range(of: words[0] + " " + words[1])!.upperBound...]
        if words[0] == "let" || line.contains("lazy var") { return name }
        // A var with a value, or with neither value nor body, is stored; `{` before any `=`
        // opens a computed body (or accessors).
        guard let brace = rest.firstIndex(of: "{") else { return name }
        if let equals = rest.firstIndex(of: "="), equals < brace { return name }
        return nil
    }

    /// The line without its comment and with its string literals emptied (their braces are not code).
    static func code(of line: String) -> String {
        var result = ""
        var inString = false
        var previous: Character = " "
        for character in line {
            if inString {
                if character == "\"", previous != "\\" { inString = false; result.append(character) }
            } else if character == "\"" {
                inString = true
                result.append(character)
            } else if character == "/", previous == "/" {
                result.removeLast()
                break
            } else {
                result.append(character)
            }
            previous = character
        }
        return result
    }
}
