@testable import AgentRuntime
import AgentTestSupport
import Foundation
import Testing

/// The settings commands' write (``SettingsFile/write(_:replacing:)``): the new file is swapped
/// in with the version the change was made to, and an edit by hand that landed after that
/// version was read is kept, the change refused.
@Suite(.ownThreads) struct SettingsFileWriteTests {
    static func file(_ text: String) throws -> SettingsFile {
        let path = TestPaths.temporaryDirectory("settings-write") + "/settings.json"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return SettingsFile(path: path)
    }

    static func text(_ file: SettingsFile) throws -> String { try String(contentsOfFile: file.path, encoding: .utf8) }

    /// Files left beside the settings (temporary files not cleaned up).
    static func others(_ file: SettingsFile) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: (file.path as NSString).deletingLastPathComponent).filter { $0 != "settings.json" }
    }

    @Test func aChangeToTheVersionOnDiskIsWrittenAndNothingIsLeftBeside() throws {
        let file = try Self.file(#"{"processes": {}}"#)
        let (_, identity) = try file.readWithIdentity()
        try file.write(Array(#"{"processes": {"a": {}}}"#.utf8), replacing: identity)
        #expect(try Self.text(file) == #"{"processes": {"a": {}}}"#)
        #expect(try Self.others(file).isEmpty)
    }

    @Test func anEditInPlaceAfterTheReadIsKeptAndTheChangeRefused() throws {
        let file = try Self.file(#"{"processes": {}}"#)
        let (_, identity) = try file.readWithIdentity()
        // Written into the same file (the same inode), as some editors do: another size.
        let handle = try #require(FileHandle(forWritingAtPath: file.path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(#"{"processes": {"by_hand": {}}}"#.utf8))
        try handle.close()
        #expect(throws: SettingsCommandError.self) { try file.write(Array(#"{"processes": {"a": {}}}"#.utf8), replacing: identity) }
        #expect(try Self.text(file) == #"{"processes": {"by_hand": {}}}"#)
        #expect(try Self.others(file).isEmpty)
    }

    @Test func anEditRenamedOverTheFileAfterTheReadIsKeptAndTheChangeRefused() throws {
        let file = try Self.file(#"{"processes": {}}"#)
        let (_, identity) = try file.readWithIdentity()
        // A new file renamed over it (another inode), as most editors save: the same size.
        try #"{"processes": {"b": 1}}"#.write(toFile: file.path, atomically: true, encoding: .utf8)
        do {
            try file.write(Array(#"{"processes": {"a": 1}}"#.utf8), replacing: identity)
            Issue.record("the change was written over the edit")
        } catch {
            #expect(error.code == .conflict && error.message.contains("the edit on disk was kept"), "\(error.message)")
        }
        #expect(try Self.text(file) == #"{"processes": {"b": 1}}"#)
        #expect(try Self.others(file).isEmpty)
    }
}
