import AgentTestSupport
import Foundation
import Testing

/// HTTPS with the certificate and key of `"tls"`: a self-signed certificate made by openssl.
@Suite(.ownThreads) struct HTTPTLSTests {
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: openssl != nil, "openssl is not installed: no certificate to test TLS with"))
    func theAPIAndItsCookiesAreServedOverTLS() throws {
        let directory = TestPaths.temporaryDirectory("http-tls")
        let made = try runProgram(Self.openssl!, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.pem",
                                                  "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                                  in: directory)
        try #require(made.status == 0, "\(made.stderr)")
        let hash = try APIAgent.hash("tls password")
        let agent = try APIAgent(http: #""tls": {"certificate": "cert.pem", "key": "key.pem"}, "tokens": ["${env:AGENT_API_TOKEN}"], "users": {"alice": {"password_hash": "\#(hash)"}}"#,
                                 directory: directory)
        #expect(agent.base.hasPrefix("https://127.0.0.1:"), "\(agent.base)")
        let trust = ["--cacert", directory + "/cert.pem"]
        let status = try agent.request("GET", "/api/status", headers: APIAgent.bearer(APIAgent.adminToken), extra: trust)
        #expect(status.status == 200, "\(status.description)")
        #expect(try agent.request("GET", "/api/status", extra: trust).status == 401)
        // Without trusting the certificate, curl refuses the server: it is really TLS.
        let untrusted = try agent.request("GET", "/livez")
        #expect(untrusted.status == 0 && untrusted.failure != nil, "\(untrusted.description)")
        // Plain HTTP to the same port gets no HTTP answer.
        let plain = try curl("GET", agent.base.replacingOccurrences(of: "https://", with: "http://") + "/livez")
        #expect(plain.status != 200, "\(plain.description)")

        let login = try agent.request("POST", "/api/login", headers: ["Content-Type": "application/json"], body: #"{"user": "alice", "password": "tls password"}"#, extra: trust)
        #expect(login.status == 200, "\(login.description)")
        #expect(login.setCookie("agent_session")?.contains("Secure") == true, "\(login.description)")
        #expect(login.setCookie("agent_csrf")?.contains("Secure") == true, "\(login.description)")
        let csrf = login.cookieValue("agent_csrf") ?? ""
        let cookie = "agent_session=\(login.cookieValue("agent_session") ?? ""); agent_csrf=\(csrf)"
        let stop = try agent.request("POST", "/api/processes/trades/stop", headers: ["Cookie": cookie, "X-CSRF-Token": csrf, "Origin": agent.base], extra: trust)
        #expect(stop.status == 200, "\(stop.description)")
        let foreign = try agent.request("POST", "/api/processes/trades/start", headers: ["Cookie": cookie, "X-CSRF-Token": csrf,
                                                                                         "Origin": agent.base.replacingOccurrences(of: "https://", with: "http://")], extra: trust)
        #expect(foreign.status == 403, "the http:// origin is not the https:// server's: \(foreign.description)")
    }
}
