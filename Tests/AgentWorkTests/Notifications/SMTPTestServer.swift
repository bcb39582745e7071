import AgentTestSupport
import Foundation

/// A real SMTP server on loopback for the notification tests: aiosmtpd (PyPI) run by a small
/// Python script this helper writes to a temporary folder. Each message it accepts is written
/// as JSON (envelope, decoded subject and body, whether TLS was on, who logged in) to a folder.
/// `silent` mode accepts connections and never answers (a hung server).
final class SMTPTestServer {
    enum Mode: String {
        case plain, starttls, smtps, silent
    }

    /// Why the tests cannot run here (no python3, no aiosmtpd, no openssl), or nil.
    static let unavailableReason: String? = {
        guard let python = try? runProgram("/usr/bin/env", ["python3", "-c", "import aiosmtpd; print(aiosmtpd.__version__)"], timeout: 60),
              python.status == 0
        else { return "aiosmtpd (pip install aiosmtpd; .ci/run installs it) cannot be imported by python3" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            return "/usr/bin/openssl is not installed (apt-get install openssl): no certificate for the TLS tests"
        }
        return nil
    }()

    let folder: String
    let messagesFolder: String
    let port: Int
    /// The server's self-signed certificate (TLS modes): the `ca_file` to trust.
    let certificate: String
    private let process = TestProcess()

    /// Starts the server on a free port of 127.0.0.1; with `username`/`password`, AUTH is
    /// required (after STARTTLS in `starttls` mode).
    init(mode: Mode, username: String? = nil, password: String? = nil) throws {
        folder = TestPaths.temporaryDirectory("smtp")
        messagesFolder = folder + "/messages"
        certificate = folder + "/cert.pem"
        try FileManager.default.createDirectory(atPath: messagesFolder, withIntermediateDirectories: true)
        try Self.script.write(toFile: folder + "/smtp_server.py", atomically: true, encoding: .utf8)
        if mode == .starttls || mode == .smtps {
            let made = try runProgram("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", folder + "/key.pem", "-out", certificate, "-days", "2",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], in: folder, timeout: 60)
            guard made.status == 0 else { throw Failure(description: "openssl req failed: \(made.stderr)") }
        }
        var arguments = ["python3", folder + "/smtp_server.py", "--mode", mode.rawValue, "--folder", messagesFolder,
                         "--cert", certificate, "--key", folder + "/key.pem"]
        if let username, let password { arguments += ["--user", username, "--password", password] }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: folder + "/server.log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: folder + "/server.log")
        try process.run()
        // The script prints "ready PORT" once it listens (port 0: the kernel picks a free one);
        // killed if it has not within 2 minutes, which ends the read.
        let deadline = ProcessDeadline.kill(process, after: 120, "the SMTP test server (its \"ready\" line)")
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        deadline.cancel()
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("ready "), let port = Int(text.dropFirst(6)) else {
            kill(process.processIdentifier, SIGKILL)
            ProcessDeadline.waitForExit(process, within: 60, "the SMTP test server")
            let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
            throw Failure(description: "the SMTP server did not start: \(text) \(log)")
        }
        self.port = port
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    func stop() {
        if process.isRunning {
            // SIGKILL: the server inherits the test process's signal mask, in which SIGTERM
            // may be blocked.
            kill(process.processIdentifier, SIGKILL)
            ProcessDeadline.waitForExit(process, within: 60, "the SMTP test server")
        }
    }

    /// The messages received so far, oldest first.
    func messages() -> [[String: Any]] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: messagesFolder)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            FileManager.default.contents(atPath: messagesFolder + "/" + name).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
    }

    /// Waits (at most `timeout` s) until `count` messages arrived; returns them.
    func waitForMessages(_ count: Int, timeout: Double = 60) -> [[String: Any]] {
        _ = OutputTestSupport.waitUntil(timeout: timeout) { messages().count >= count }
        return messages()
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A port of 127.0.0.1 that nothing listens on (bound, then closed): a server that is down.
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static let script = #"""
import argparse, asyncio, email, email.policy, json, os, ssl
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

parser = argparse.ArgumentParser()
parser.add_argument("--mode", default="plain")
parser.add_argument("--folder", required=True)
parser.add_argument("--cert")
parser.add_argument("--key")
parser.add_argument("--user")
parser.add_argument("--password")
args = parser.parse_args()

class Handler:
    def __init__(self):
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
        login = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        record = {"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos, "subject": str(message["subject"]),
                  "body": body, "login": login,
                  "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
                  "raw": (envelope.original_content or envelope.content).decode("utf-8", "replace")}
        self.count += 1
        path = os.path.join(args.folder, "%04d.json" % self.count)
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        return "250 OK"

def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user
          and auth_data.password.decode() == args.password)
    return AuthResult(success=ok, handled=False, auth_data=auth_data)

class Silent(asyncio.Protocol):
    def data_received(self, data):
        pass

async def main():
    loop = asyncio.get_running_loop()
    context = None
    if args.mode in ("starttls", "smtps"):
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    options = {}
    if args.user:
        options.update(authenticator=authenticator, auth_required=True, auth_require_tls=(args.mode == "starttls"))
    handler = Handler()
    if args.mode == "silent":
        factory = Silent
    elif args.mode == "starttls":
        factory = lambda: SMTP(handler, tls_context=context, require_starttls=True, **options)
    else:
        factory = lambda: SMTP(handler, **options)
    server = await loop.create_server(factory, "127.0.0.1", 0, ssl=context if args.mode == "smtps" else None)
    print("ready %d" % server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"""#
}
