@testable import AgentCommands
import AgentRuntime
import AgentTestSupport
import Foundation
import Testing

/// `"http"`'s credentials, TLS and address in the settings: every problem an error at its
/// pointer (through `validate-settings` too), no value from the environment ever shown; and
/// `agent-control hash-password`.
@Suite(.ownThreads) struct HTTPSettingsTests {
    static let hash = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"


    @Test func credentialProblemsAreErrorsAtTheirPointersAndValidateSettingsSaysSo() throws {
        let directory = TestPaths.temporaryDirectory("http-settings")
        let file = directory + "/settings.json"
        try #"""
        {"enabled_modules": [], "processes": {},
         "http": {"listen": "0.0.0.0:8080",
                  "tokens": ["${env:SHORT_TOKEN}", {"token": "${env:UNSET_TOKEN_X}", "role": "read"}, "literal-short"],
                  "users": {"alice": {"password": "secret"}, "bob": {"password_hash": "not-a-hash"}, "carol": {"password_hash": "\#(Self.hash)", "role": "admin"}}}}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build"], environment: ["SHORT_TOKEN": "s3cr3t-x"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let output = result.stdout + result.stderr
        for expected in [
            "/http/tokens/0", "at least 16 characters; the token from ${env:SHORT_TOKEN} has 8",
            "/http/tokens/1/token", "environment variable UNSET_TOKEN_X is not set",
            "/http/tokens/2", "expected a token from the environment, written as \"${env:NAME}\"", "/http/users/alice/password", "agent-control hash-password",
            "/http/users/bob/password_hash", "expected a bcrypt hash",
            "/http/listen", "0.0.0.0 is not a loopback address", "allow_insecure_remote",
        ] {
            #expect(output.contains(expected), "missing \(expected):\n\(output)")
        }
        #expect(!output.contains("s3cr3t-x"), "a value from the environment was shown:\n\(output)")
        #expect(!output.contains("literal-short"), "a token was shown:\n\(output)")
        #expect(!output.contains("/http/users/carol"), "\(output)")
    }

    @Test func aTokenOrUserNamedAfterARoleOrAnotherIdentityIsRefused() throws {
        let directory = TestPaths.temporaryDirectory("http-names")
        let file = directory + "/settings.json"
        try #"""
        {"enabled_modules": [], "processes": {},
         "http": {"listen": "127.0.0.1:8080",
                  "tokens": [{"token": "${env:T1}", "role": "read", "name": "admin"}, {"token": "${env:T2}", "role": "read", "name": "alice"},
                             {"token": "${env:T3}", "name": "ci"}, {"token": "${env:T4}", "name": "ci"}],
                  "users": {"alice": {"password_hash": "\#(Self.hash)"}, "read": {"password_hash": "\#(Self.hash)", "role": "read"}}}}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let environment = ["T1": String(repeating: "a", count: 32), "T2": String(repeating: "b", count: 32),
                           "T3": String(repeating: "c", count: 32), "T4": String(repeating: "d", count: 32)]
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build"], environment: environment)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let output = result.stdout + result.stderr
        for expected in [
            "/http/tokens/0/name", "\"admin\" is the name of a role",
            "/http/tokens/1/name", "\"alice\" is also a user of /http/users",
            "/http/tokens/3/name", "\"ci\" is also the name of /http/tokens/2",
            "/http/users/read", "\"read\" is the name of a role",
        ] {
            #expect(output.contains(expected), "missing \(expected):\n\(output)")
        }
        #expect(!output.contains("/http/tokens/2/name"), "\(output)")
    }

    @Test func anAddressThatIsNotLoopbackIsAcceptedWithTLSOrWhenAllowed() throws {
        let directory = TestPaths.temporaryDirectory("http-tls-settings")
        let allowed = try settingsIssues(#"{"listen": "0.0.0.0:8080", "allow_insecure_remote": true, "users": {"a": {"password_hash": "\#(Self.hash)"}}}"#, in: directory)
        #expect(allowed.isEmpty, "\(allowed)")
        for loopback in ["127.0.0.1:0", "[::1]:0", "localhost:0", "127.1.2.3:0"] {
            let issues = try settingsIssues(#"{"listen": "\#(loopback)", "users": {"a": {"password_hash": "\#(Self.hash)"}}}"#, in: directory)
            #expect(issues.isEmpty, "\(loopback): \(issues)")
        }
        let missing = try settingsIssues(#"{"listen": "0.0.0.0:8080", "tls": {"certificate": "cert.pem", "key": "key.pem"}, "users": {"a": {"password_hash": "\#(Self.hash)"}}}"#, in: directory)
        #expect(missing["/http/tls/certificate"]?.contains("\(directory)/cert.pem does not exist") == true, "\(missing)")
        #expect(missing["/http/tls/key"] != nil, "\(missing)")
        #expect(missing["/http/listen"] == nil, "\(missing)")
        try "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n".write(toFile: directory + "/cert.pem", atomically: true, encoding: .utf8)
        try "not a key".write(toFile: directory + "/key.pem", atomically: true, encoding: .utf8)
        let notKey = try settingsIssues(#"{"listen": "0.0.0.0:8080", "tls": {"certificate": "cert.pem", "key": "key.pem"}, "users": {"a": {"password_hash": "\#(Self.hash)"}}}"#, in: directory)
        #expect(notKey.keys.sorted() == ["/http/tls/key"], "\(notKey)")
        #expect(notKey["/http/tls/key"]?.contains("is not one") == true, "\(notKey)")
    }

    @Test func httpWithoutAnyCredentialIsRefused() throws {
        let issues = try settingsIssues(#"{"listen": "127.0.0.1:0"}"#, in: TestPaths.temporaryDirectory("http-none"))
        #expect(issues["/http"]?.contains("expected \"tokens\" or \"users\"") == true, "\(issues)")
    }

    /// The bounds against slow and greedy clients have minimums (no interval of 1e-300 s), and
    /// the health listener is checked like `"listen"`.
    @Test func connectionLimitsHaveMinimumsAndTheHealthListenerIsCheckedAtItsPointer() throws {
        let directory = TestPaths.temporaryDirectory("http-limits")
        let user = #""users": {"a": {"password_hash": "\#(Self.hash)"}}"#
        let tiny = try settingsIssues(#"{"listen": "127.0.0.1:8080", \#(user), "header_timeout": 0.01, "idle_timeout": 1e-300, "max_connections_per_client": 0, "readiness": {"window": 1e-300}}"#, in: directory)
        for pointer in ["/http/header_timeout", "/http/idle_timeout", "/http/max_connections_per_client", "/http/readiness/window"] {
            #expect(tiny[pointer] != nil, "\(pointer): \(tiny)")
        }
        let samePort = try settingsIssues(#"{"listen": "127.0.0.1:8080", \#(user), "health_listen": "127.0.0.1:8080"}"#, in: directory)
        #expect(samePort["/http/health_listen"]?.contains("a port other than \"listen\"'s (8080)") == true, "\(samePort)")
        let remote = try settingsIssues(#"{"listen": "127.0.0.1:8080", \#(user), "health_listen": "0.0.0.0:8081"}"#, in: directory)
        #expect(remote["/http/health_listen"]?.contains("0.0.0.0 is not a loopback address") == true, "\(remote)")
        let garbled = try settingsIssues(#"{"listen": "127.0.0.1:8080", \#(user), "health_listen": "8081"}"#, in: directory)
        #expect(garbled["/http/health_listen"]?.contains("expected HOST:PORT") == true, "\(garbled)")
        let fine = try settingsIssues(#"{"listen": "127.0.0.1:0", \#(user), "health_listen": "127.0.0.1:0", "header_timeout": 0.5, "max_connections_per_client": 1}"#, in: directory)
        #expect(fine.isEmpty, "\(fine)")
    }

    /// The host-level issues of settings with this `"http"`, by pointer.
    func settingsIssues(_ http: String, in directory: String) throws -> [String: String] {
        let file = directory + "/settings.json"
        try #"{"enabled_modules": [], "processes": {}, "http": \#(http)}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let settings = try AgentSettings.load(file: file)
        return Dictionary(settings.hostIssues.map { ($0.pointer, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
    }

    @Test func hashPasswordPrintsABcryptHashOfStandardInput() throws {
        let hash = try APIAgent.hash("pässword with spaces")
        #expect(HTTPSettings.isBcryptHash(hash), "\(hash)")
        #expect(hash.hasPrefix("$2b$12$"), "\(hash)")
        let cheaper = try runProgram("agent-control", ["hash-password", "--cost", "10"], input: Data("x".utf8))
        #expect(cheaper.stdout.hasPrefix("$2b$10$"), "\(cheaper.stdout)\(cheaper.stderr)")
        let empty = try runProgram("agent-control", ["hash-password"], input: Data("\n".utf8))
        #expect(empty.status == 1 && empty.stdout.isEmpty && empty.stderr.contains("no password"), "\(empty.stderr)")
        // Two lines would be hashed as one password with a line break, which no one can type.
        let twoLines = try runProgram("agent-control", ["hash-password"], input: Data("pw\npw\n".utf8))
        #expect(twoLines.status == 1 && twoLines.stdout.isEmpty && twoLines.stderr.contains("more than one line"), "\(twoLines.stderr)")
        let long = try runProgram("agent-control", ["hash-password"], input: Data(String(repeating: "a", count: 73).utf8))
        #expect(long.status == 1 && long.stderr.contains("72"), "\(long.stderr)")
        let help = try runProgram("agent-control", ["hash-password", "--help"])
        #expect(help.stdout.contains("password_hash"), "\(help.stdout)")
    }
}
