import AgentCore
import AgentSupervision
import CAgentSystem
import Foundation

/// Runs agent-bench itself in a child mode (`agent-bench --child MODE …`) and collects what
/// it prints. A child may also get one end of a socketpair as fd 3 (and another as fd 0).
enum ChildRunner {
    /// A running child whose standard output the parent reads.
    struct Child {
        let pid: pid_t
        let output: Int32

        /// Reads one line of output (blocking), or nil at end of output.
        func readLine(timeout: Double) -> String? {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            let deadline = Clock.now() + timeout
            while Clock.now() < deadline {
                var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, Int32(max(1, (deadline - Clock.now()) * 1000))) > 0 else { continue }
                let n = read(output, &byte, 1)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
                if byte == 10 { return String(decoding: line, as: UTF8.self) }
                line.append(byte)
            }
            return nil
        }

        /// Closes the output and waits for the exit; returns the raw status.
        @discardableResult
        func finish() -> Int32 {
            close(output)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            return status
        }
    }

    /// Starts `agent-bench --child <arguments>`; `channel` becomes the child's fd 3, `stdin` its
    /// fd 0 (-1: /dev/null).
    static func start(_ environment: BenchEnvironment, _ arguments: [String], channel: Int32 = -1, stdin: Int32 = -1) throws -> Child {
        var fds: [Int32] = [0, 0]
        guard agent_pipe_cloexec(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        let spawned = ProcessSpawner.spawn(
            path: environment.selfPath, arguments: ["agent-bench", ChildMode.flag] + arguments,
            environment: ProcessInfo.processInfo.environment, stdin: stdin, stdout: fds[1], stderr: 2, channel: channel, newGroup: false)
        close(fds[1])
        switch spawned {
        case .success(let pid): return Child(pid: pid, output: fds[0])
        case .failure(let error):
            close(fds[0])
            throw BenchError("\(error)")
        }
    }

    /// Runs a child to the end and returns its first line of output.
    static func run(_ environment: BenchEnvironment, _ arguments: [String], timeout: Double = 30) throws -> String {
        let child = try start(environment, arguments)
        let line = child.readLine(timeout: timeout)
        let status = child.finish()
        guard let line, status == 0 else {
            throw BenchError("child \(arguments.joined(separator: " ")) failed (status \(status)): \(line ?? "no output")")
        }
        return line
    }
}
