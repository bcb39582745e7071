import CAgentSystem
import Foundation

/// A `jsonl/1` module's program started by its worker: its pid and the worker's ends of its
/// stdin and stdout pipes (its stderr is the worker's, which the supervisor keeps in the
/// process log). It is in the worker's process group and cgroup, and dies with the worker
/// (PR_SET_PDEATHSIG, set for the thread that starts it: start it from one that lives as long
/// as the worker).
struct ProgramChild {
    var pid: pid_t
    /// Where the runtime's lines go (the program's stdin).
    var input: Int32
    /// Where the program's lines come from (its stdout).
    var output: Int32

    /// Why a program could not start, said so that the module's author can fix it.
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `command` (the manifest's, for one process type) in `directory`: a first
    /// argument with a `/` is a path (relative to the module's folder), any other is looked up
    /// in PATH. `ownGroup`: in a process group of its own (the pid's), not the worker's.
    static func start(command: [String], directory: String, ownGroup: Bool = false) throws(StartError) -> ProgramChild {
        guard let first = command.first else { throw StartError(description: "the manifest gives no command") }
        let path = try resolve(first, directory: directory)
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        guard agent_pipe_cloexec(&stdinPipe) == 0 else { throw StartError(description: "cannot make a pipe: \(String(cString: strerror(errno)))") }
        guard agent_pipe_cloexec(&stdoutPipe) == 0 else {
            stdinPipe.forEach { close($0) }
            throw StartError(description: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        var pid: pid_t = 0
        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let code = path.withCString { pathPointer in
            directory.withCString { directoryPointer in
                arguments.withUnsafeBufferPointer { argv in
                    ownGroup
                        ? agent_spawn_program_grouped(pathPointer, argv.baseAddress, environ, stdinPipe[0], stdoutPipe[1], 2,
                                                      directoryPointer, SIGKILL, &pid)
                        : agent_spawn_program(pathPointer, argv.baseAddress, environ, stdinPipe[0], stdoutPipe[1], 2,
                                              directoryPointer, SIGKILL, &pid)
                }
            }
        }
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard code == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw StartError(description: "cannot start \(path) (in \(directory)): \(String(cString: strerror(code)))")
        }
        return ProgramChild(pid: pid, input: stdinPipe[1], output: stdoutPipe[0])
    }

    /// The executable `name` names: a path (relative to `directory`), or the first match in PATH.
    static func resolve(_ name: String, directory: String) throws(StartError) -> String {
        if name.contains("/") {
            let path = name.hasPrefix("/") ? name : directory + "/" + name
            guard access(path, X_OK) == 0 else {
                throw StartError(description: "the command's program \(path) is not an executable file (\(String(cString: strerror(errno)))); fix the manifest's \"command\" or `chmod +x` it")
            }
            return path
        }
        let searched = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in searched.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        throw StartError(description: "the command's program \"\(name)\" is not in PATH (\(searched)); install it, or give its path in the manifest's \"command\"")
    }

    /// Writes all of `bytes` (blocking: a program that does not read holds the writer, which
    /// is the back-pressure). False when the program closed its stdin.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        DescriptorWrite.all(fd, bytes)
    }

    /// How the program ended (blocks until it does): its exit status, or the signal that killed it.
    func wait() -> (code: Int32?, signal: Int32?) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return (nil, nil) }
        }
        if status & 0x7F == 0 { return ((status >> 8) & 0xFF, nil) }
        return (nil, status & 0x7F)
    }
}
