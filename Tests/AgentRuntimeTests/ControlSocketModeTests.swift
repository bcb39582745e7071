import AgentTestSupport
import CAgentSystem
import Foundation
import Testing

/// The control socket is made 0600 without the process-wide umask. Binding it used to set the
/// umask to 0177 around `bind()`: a child another thread spawned in that moment kept it for
/// life (in a CI run, `cc` and `swift build` wrote programs 0600 that could not run), and two
/// binds at once could leave the whole process at 0177 for good.
@Suite(.ownThreads) struct ControlSocketModeTests {
    /// The process's umask as the kernel shows it (without setting it to read it).
    static func umaskNow() -> String? {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map { String($0.dropFirst(6)).trimmingCharacters(in: .whitespaces) }
    }

    @Test func socketsBoundOnManyThreadsAre0600AndTheUmaskNeverChanges() throws {
        let before = try #require(Self.umaskNow())
        let directory = TestPaths.temporaryDirectory("socket-umask")
        let directoryFD = agent_open_directory(directory)
        try #require(directoryFD >= 0)
        defer { close(directoryFD) }
        let threads = 4, binds = 150
        let modes = Collected<mode_t>()
        let failures = Collected<String>()
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for round in 0..<binds {
                    let name = "s\(thread)-\(round).sock"
                    let fd = agent_unix_socket(directoryFD, name, 1)
                    guard fd >= 0 else { failures.append("\(name): \(String(cString: strerror(errno)))"); continue }
                    var facts = stat()
                    if fstatat(directoryFD, name, &facts, 0) == 0 { modes.append(facts.st_mode) }
                    close(fd)
                    unlinkat(directoryFD, name, 0)
                }
            }
        }
        // Meanwhile the umask is read again and again, as a child spawned now would inherit it.
        var seen = Set<String>()
        while done.wait(timeout: .now()) == .timedOut {
            if let mask = Self.umaskNow() { seen.insert(mask) }
        }
        #expect(failures.values.isEmpty)
        #expect(seen.subtracting([before]).isEmpty, "the umask was \(seen.sorted()) while sockets were bound, not only \(before)")
        #expect(Self.umaskNow() == before)
        let found = modes.values
        #expect(found.count == threads * binds)
        #expect(found.allSatisfy { $0 & 0o7777 == 0o600 && $0 & S_IFMT == S_IFSOCK }, "every socket 0600")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(left.isEmpty, "no socket or half-bound name left: \(left)")
    }
}

/// What the binding threads report, under a lock.
private final class Collected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Value] = []
    func append(_ value: Value) { lock.withLock { stored.append(value) } }
    var values: [Value] { lock.withLock { stored } }
}
