import AgentCLI
import AgentHTTP
import ArgumentParser
import Foundation

/// `agent-control hash-password`: the bcrypt hash to put in `"http": {"users": {NAME:
/// {"password_hash": …}}}`, so that no password is ever written in the settings.
struct HashPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password",
        abstract: "Print a bcrypt hash of a password for \"http\": {\"users\"}.",
        discussion: """
        On a terminal the password is asked for twice, without echo; otherwise it is read from \
        standard input (one line; the trailing newline is not part of it). Prints the hash on \
        standard output, e.g.:

          agent-control hash-password
          printf '%s' "$PASSWORD" | agent-control hash-password

        Then in settings.json: "http": {"users": {"alice": {"password_hash": "$2b$12$…", \
        "role": "admin"}}}. Bcrypt uses at most 72 bytes of a password: longer ones are refused, as \
        are an empty one and two entries that differ.
        """)

    @Option(name: .long, help: "The bcrypt cost, from 10 to 16 (each step doubles the time; 12 takes about 0.25 s).")
    var cost = PasswordHashing.defaultCost

    func validate() throws {
        guard (10...16).contains(cost) else { throw ValidationError("--cost must be from 10 to 16; found \(cost)") }
    }

    func run() throws {
        let password: String
        if isatty(STDIN_FILENO) == 1 {
            let first = try Self.readHidden(prompt: "Password: ")
            let second = try Self.readHidden(prompt: "Again: ")
            guard first == second else { throw CommandFailure.report("the two passwords differ; nothing printed") }
            password = first
        } else {
            var data = FileHandle.standardInput.readDataToEndOfFile()
            if data.last == UInt8(ascii: "\n") { data.removeLast() }
            if data.last == UInt8(ascii: "\r") { data.removeLast() }
            guard let text = String(data: data, encoding: .utf8) else { throw CommandFailure.report("the password on standard input is not UTF-8") }
            // A password no one could type at the login form (`printf 'pw\npw\n'` was hashed as "pw\npw").
            guard !text.contains(where: \.isNewline) else {
                throw CommandFailure.report("standard input has more than one line; give the password alone, on one line (printf '%s' \"$PASSWORD\" | agent-control hash-password); nothing printed")
            }
            password = text
        }
        guard !password.isEmpty else { throw CommandFailure.report("no password given (an empty one is refused)") }
        guard password.utf8.count <= 72 else {
            throw CommandFailure.report("the password is \(password.utf8.count) bytes long; bcrypt uses only the first 72, so choose one of at most 72 bytes")
        }
        print(PasswordHashing.hash(password, cost: cost))
    }

    /// A line read from the terminal with echo off (restored even on an error).
    static func readHidden(prompt: String) throws -> String {
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { throw CommandFailure.report("cannot read the terminal's settings: \(String(cString: strerror(errno)))") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        // The prompt only once echo is off: what is typed after it is never shown.
        FileHandle.standardError.write(Data(prompt.utf8))
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = Swift.readLine(strippingNewline: true) else { throw CommandFailure.report("no password given (end of input)") }
        return line
    }
}
