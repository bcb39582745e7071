import AgentTestSupport
import Foundation
import Testing

/// Messages for what a newcomer got wrong say what was expected and what was found.
@Suite(.ownThreads, .serialized) struct ClearMessagesTests {
    @Test func specialFilesAsSettingsAreNamedByTheirKind() throws {
        let folder = TestPaths.temporaryDirectory("special")
        let fifo = folder + "/fifo.json"
        #expect(mkfifo(fifo, 0o644) == 0)
        let cases = [("/dev/zero", "a character device"), (fifo, "a FIFO (named pipe)"), (folder, "a folder")]
        for (path, kind) in cases {
            // A FIFO without a writer must not block the reader.
            let result = try runProgram("validate-settings", ["--settings", path, "--no-build"], in: folder, timeout: 20)
            #expect(result.status == 2, "\(path): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(path): /: expected a settings file (a regular file of JSON), found \(kind)"), "\(path): \(result.stderr)")
            let console = try runProgram("agent-control", ["console", "--settings", path, "--no-build"], in: folder, timeout: 20)
            #expect(console.status == 2)
            #expect(console.stderr.contains("found \(kind)"), "\(path): \(console.stderr)")
        }
    }

    /// A chat message larger than the control socket takes, and such a request sent by hand.
    @Test func oversizedRequestsSayTheLimit() throws {
        let directory = TestPaths.temporaryDirectory("bigchat")
        try #"{"enabled_modules": [], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["features"]}}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        defer { _ = try? runProgram("agent-control", ["stop", "--timeout", "20"], in: directory) }
        let started = try runProgram("agent-control", ["start", "--no-build"], in: directory)
        #expect(started.status == 0, "\(started.stderr)")

        let message = Data(repeating: UInt8(ascii: "a"), count: 10 << 20) + Data("\n".utf8)
        let chat = try runProgram("agent-control", ["chat"], in: directory, input: message, timeout: 60)
        #expect(chat.stderr.contains("error: the message is too large: 10485760 bytes; a chat message can be at most about 1 MiB (the control socket takes requests of at most 1114112 bytes"), "\(chat.stderr)")
        #expect(!chat.stderr.contains("not valid JSON"))

        // By hand: 2 MiB without an end of line gets an answer that says the limit.
        let answer = try rawRequest(Data(repeating: UInt8(ascii: " "), count: 2 << 20), socket: directory + "/.agent/run/control.sock")
        #expect(answer.contains("the request is larger than the control socket's limit of 1114112 bytes"), "\(answer)")
        // The agent still answers.
        let status = try runProgram("agent-control", ["status"], in: directory)
        #expect(status.status == 0)
    }

    @Test func aCommandThatIsNotAStringSaysWhatWasExpected() throws {
        let directory = TestPaths.temporaryDirectory("badcommand")
        try #"{"enabled_modules": [], "processes": {}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        defer { _ = try? runProgram("agent-control", ["stop", "--timeout", "20"], in: directory) }
        let started = try runProgram("agent-control", ["start", "--no-build"], in: directory)
        #expect(started.status == 0, "\(started.stderr)")
        let socket = directory + "/.agent/run/control.sock"
        let number = try rawRequest(Data(#"{"command": 12}"#.utf8) + Data("\n".utf8), socket: socket)
        // Every command of the registry is offered, not a hand-kept list.
        #expect(number.contains(#"\"command\" must be a string (status, "#), "\(number)")
        #expect(number.contains(#"task_assign"#) && number.contains(#"); found an integer (12)"#), "\(number)")
        let none = try rawRequest(Data("{}\n".utf8), socket: socket)
        #expect(none.contains(#"the request has no \"command\""#), "\(none)")
        let array = try rawRequest(Data("[1]\n".utf8), socket: socket)
        #expect(array.contains("a request must be a JSON object"), "\(array)")
        let misspelled = try rawRequest(Data(#"{"command": "stauts"}"#.utf8) + Data("\n".utf8), socket: socket)
        #expect(misspelled.contains(#"unknown command \"stauts\"; did you mean \"status\"?"#), "\(misspelled)")
        let process = try rawRequest(Data(#"{"command": "process", "action": "stop", "name": 12}"#.utf8) + Data("\n".utf8), socket: socket)
        // As HTTP refuses it: the validator's message at the member's pointer.
        #expect(process.contains(#""pointer":"\/name""#) || process.contains(#""pointer":"/name""#), "\(process)")
        #expect(process.contains(#"/name: expected"#), "\(process)")
    }

    /// SIGTERM while a module's describe worker loads it (a library whose initialiser hangs):
    /// the console stops at once, kills the worker and says why.
    @Test func sigtermWhileDescribingAModuleStopsCleanlyAndSaysWhy() throws {
        let library = try CModuleFixture.build("hangs", source: """
        #include <unistd.h>
        void *agent_module_entry(void) { sleep(120); return 0; }
        """)
        let agent = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "processes": {}}"#, arguments: ["--no-build"])
        let deadline = Date().addingTimeInterval(60)
        var worker: Int32?
        while worker == nil, Date() < deadline {
            worker = Self.process(withArguments: ["--describe", library])
            if worker == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let describing = try #require(worker, "no describe worker appeared: \(agent.transcript)")
        let status = agent.stop(signal: SIGTERM, timeout: 10)
        #expect(status == 0, "\(agent.transcript)")
        #expect(status == nil || agent.process.terminationReason == .exit)
        #expect(agent.stderrLines.contains { $0.contains("stopped by SIGTERM while describing module hangs (its describe worker was killed); nothing was started") },
                "\(agent.transcript)")
        #expect(!AgentRun.isAlive(describing))
    }

    /// SIGTERM while a stale module is being built: the build is stopped and the console says so.
    @Test func sigtermWhileBuildingAModuleStopsTheBuildAndSaysWhy() throws {
        let directory = TestPaths.temporaryDirectory("building")
        try FileManager.default.createDirectory(atPath: directory + "/modules/slow/Sources", withIntermediateDirectories: true)
        try "// never compiled".write(toFile: directory + "/modules/slow/Sources/Slow.swift", atomically: true, encoding: .utf8)
        // A stand-in for swift that builds for two minutes.
        let swift = directory + "/fake-swift"
        try "#!/bin/sh\necho $$ > \(directory)/build.pid\nexec sleep 120\n".write(toFile: swift, atomically: true, encoding: .utf8)
        chmod(swift, 0o755)
        let agent = try AgentRun(settings: #"{"enabled_modules": ["slow"], "processes": {}}"#, arguments: [],
                                 environment: ["SWIFT_EXEC_PATH": swift], directory: directory)
        let deadline = Date().addingTimeInterval(60)
        var build: Int32?
        while build == nil, Date() < deadline {
            build = (try? String(contentsOfFile: directory + "/build.pid", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if build == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let building = try #require(build, "the build did not start: \(agent.transcript)")
        let status = agent.stop(signal: SIGTERM, timeout: 10)
        #expect(status == 0, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("stopped by SIGTERM while building module slow (the build was stopped); nothing was started") },
                "\(agent.transcript)")
        #expect(!AgentRun.isAlive(building))
        if AgentRun.isAlive(building) { kill(building, SIGKILL) }
    }

    /// The pid of a live process whose command line contains `arguments` in order.
    static func process(withArguments arguments: [String]) -> Int32? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if let first = words.firstIndex(of: arguments[0]), Array(words[first...].prefix(arguments.count)) == arguments, AgentRun.isAlive(pid) {
                return pid
            }
        }
        return nil
    }

    /// Sends `bytes` on the control socket and returns what comes back before it closes.
    func rawRequest(_ bytes: Data, socket path: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let utf8 = Array(path.utf8)
            raw.copyBytes(from: utf8.prefix(raw.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(connected == 0, "connect \(path): \(String(cString: strerror(errno)))")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n <= 0 { break }
                offset += n
            }
        }
        var answer = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            answer.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
