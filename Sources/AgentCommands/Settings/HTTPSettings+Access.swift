import AgentBase
import Foundation
import JSONSchema

/// A bearer token of `"http": {"tokens": …}`. Its value is a secret: never printed (its
/// description shows its name and where it came from).
public struct APIToken: Sendable, Equatable, CustomStringConvertible {
    /// The token itself.
    public var value: String
    /// `read` or `admin`.
    public var role: String
    /// Shown in the audit: the configured name, or `token #N` (N from 1, in file order).
    public var name: String
    /// Commands it may send besides its role's, by their grant (`publish`: `event_publish`).
    public var grants: [String]

    public init(value: String, role: String, name: String, grants: [String] = []) {
        self.value = value
        self.role = role
        self.name = name
        self.grants = grants
    }

    public var description: String { "\(name) (\(role))" }
}

/// A user of `"http": {"users": …}`: a bcrypt hash, never a password.
public struct APIUser: Sendable, Equatable {
    /// `$2b$12$…`.
    public var passwordHash: String
    /// `read` or `admin`.
    public var role: String
}

/// `"http": {"tls": …}`: absolute paths of PEM files.
public struct TLSFiles: Sendable, Equatable {
    public var certificate: String
    public var key: String
}

extension HTTPSettings {
    /// The shortest token accepted.
    public static let shortestToken = 16

    package static func readTokens(_ json: JSONValue?, environment: [String: String], issues: inout [(pointer: String, message: String)]) -> [APIToken] {
        var tokens: [APIToken] = []
        for (index, item) in (json?.arrayValue ?? []).enumerated() {
            let pointer = "/http/tokens/\(index)"
            let written: String
            let valuePointer: String
            if let text = item.stringValue {
                (written, valuePointer) = (text, pointer)
            } else if let text = item["token"]?.stringValue {
                (written, valuePointer) = (text, pointer + "/token")
            } else {
                continue
            }
            // Written in the file, a token would be shown to every reader of the settings
            // (GET /api/settings, the read role included) and end up in backups and commits.
            guard EnvironmentReferences.containsReference(written) else {
                issues.append((valuePointer, "expected a token from the environment, written as \"${env:NAME}\" (e.g. \"${env:AGENT_API_TOKEN}\"); a token written in the settings file would be shown to whoever reads the settings"))
                continue
            }
            let value: String
            do {
                value = try EnvironmentReferences.resolve(written, environment: environment)
            } catch {
                issues.append((valuePointer, error.message))
                continue
            }
            // The value is never shown: only its length and where it came from.
            let origin = "the token from \(written)"
            if value.count < shortestToken {
                issues.append((valuePointer, "expected a token of at least \(shortestToken) characters; \(origin) has \(value.count) (make one with `openssl rand -hex 32`)"))
                continue
            }
            if value.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false }) {
                issues.append((valuePointer, "expected a token without spaces or control characters (it is sent in a header); \(origin) has some"))
                continue
            }
            if tokens.contains(where: { $0.value == value }) {
                issues.append((valuePointer, "\(origin) is the same as an earlier token; give each program its own"))
                continue
            }
            tokens.append(APIToken(value: value, role: item["role"]?.stringValue ?? "admin",
                                   name: item["name"]?.stringValue ?? "token #\(index + 1)",
                                   grants: item["grants"]?.arrayValue?.compactMap(\.stringValue) ?? []))
        }
        return tokens
    }

    /// Users, named tokens and roles share one namespace where it matters: an approval's
    /// `approvers` and the audit name a user, a token or a role by its name alone. So a name
    /// is refused when it is a role's (`read`, `admin`), or is both a user's and a token's, or
    /// two tokens'; otherwise a read token named `admin` (or `alice`) would answer an approval
    /// meant for the admin role (or the admin user alice).
    package static func checkIdentityNames(tokens: JSONValue?, users: JSONValue?, issues: inout [(pointer: String, message: String)]) {
        let roles: Set<String> = ["read", "admin"]
        let userNames = Set((users?.objectValue ?? [:]).keys)
        for name in userNames.sorted() where roles.contains(name) {
            issues.append(("/http/users/" + JSONPointer.escape(name),
                           "\"\(name)\" is the name of a role; a user of that name could answer approvals meant for every \(name) (rename the user)"))
        }
        var tokenNames: [String: Int] = [:]
        for (index, item) in (tokens?.arrayValue ?? []).enumerated() {
            guard let name = item["name"]?.stringValue else { continue }
            let pointer = "/http/tokens/\(index)/name"
            if roles.contains(name) {
                issues.append((pointer, "\"\(name)\" is the name of a role; a token of that name could answer approvals meant for every \(name) (name the token after the program that uses it)"))
            } else if userNames.contains(name) {
                issues.append((pointer, "\"\(name)\" is also a user of /http/users; users and tokens need names of their own, or the token could act as the user in approvals (rename the token)"))
            } else if let earlier = tokenNames[name] {
                issues.append((pointer, "\"\(name)\" is also the name of /http/tokens/\(earlier); give each token a name of its own"))
            }
            tokenNames[name] = tokenNames[name] ?? index
        }
    }

    /// Whether `text` looks like a bcrypt hash: `$2a$`, `$2b$` or `$2y$`, a cost from 04 to
    /// 31, and 53 characters of bcrypt's base64 (salt and hash).
    public static func isBcryptHash(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
              bytes[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)), (4...31).contains(cost)
        else { return false }
        return bytes[7...].allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/")
        }
    }

    package static func readUsers(_ json: JSONValue?, issues: inout [(pointer: String, message: String)]) -> [String: APIUser] {
        var users: [String: APIUser] = [:]
        for (name, item) in json?.objectValue ?? [:] {
            let pointer = "/http/users/" + JSONPointer.escape(name)
            if item["password"] != nil {
                issues.append((pointer + "/password", "a password is never stored in the settings; run `agent-control hash-password` and put what it prints in \"password_hash\" instead"))
                continue
            }
            guard let hash = item["password_hash"]?.stringValue else {
                issues.append((pointer, "expected \"password_hash\" (a bcrypt hash printed by `agent-control hash-password`); found none"))
                continue
            }
            guard isBcryptHash(hash) else {
                // A hash is not a secret worth hiding, but what was put here by mistake may be
                // a password: show its length only.
                issues.append((pointer + "/password_hash", "expected a bcrypt hash (60 characters: $2b$12$ then 53 of ./A-Za-z0-9), as printed by `agent-control hash-password`; found a string of \(hash.count) characters that is not one"))
                continue
            }
            users[name] = APIUser(passwordHash: hash, role: item["role"]?.stringValue ?? "admin")
        }
        return users
    }

    package static func readTLS(_ json: JSONValue?, agentDirectory: String, issues: inout [(pointer: String, message: String)]) -> TLSFiles? {
        guard let json, let certificate = json["certificate"]?.stringValue, let key = json["key"]?.stringValue else { return nil }
        func check(_ written: String, pointer: String, marker: String, what: String) -> String? {
            let path = written.hasPrefix("/") ? written : (agentDirectory as NSString).appendingPathComponent(written)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                issues.append((pointer, "expected a readable PEM file (\(what)); \(path) does not exist"))
                return nil
            }
            guard !isFolder.boolValue else {
                issues.append((pointer, "expected a readable PEM file (\(what)); \(path) is a folder"))
                return nil
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                issues.append((pointer, "expected a readable PEM file (\(what)); \(path) cannot be read (permissions?)"))
                return nil
            }
            let text = String(decoding: data.prefix(1 << 20), as: UTF8.self)
            guard text.contains("-----BEGIN"), text.contains(marker) else {
                issues.append((pointer, "expected a PEM file (\(what), \"-----BEGIN …\(marker)-----\"); \(path) is not one"))
                return nil
            }
            return path
        }
        let certificatePath = check(certificate, pointer: "/http/tls/certificate", marker: "CERTIFICATE", what: "a certificate chain")
        let keyPath = check(key, pointer: "/http/tls/key", marker: "PRIVATE KEY", what: "a private key")
        guard let certificatePath, let keyPath else { return nil }
        return TLSFiles(certificate: certificatePath, key: keyPath)
    }
}
