@testable import AgentOutputs
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

@Suite(.ownThreads) struct OutputConfigurationTests {
    @Test func defaultsAreFilledIn() throws {
        let outputs = try OutputConfiguration.list(json: [
            ["type": "stdout"],
            ["type": "file", "path": "log/out.jsonl"],
            ["type": "webhook", "url": "https://hooks.example/agent"],
        ], environment: [:])
        #expect(outputs.map(\.name) == ["stdout", "file log/out.jsonl", "webhook https://hooks.example/agent"])
        #expect(outputs.allSatisfy { $0.kinds == [.event, .message] && $0.buffer == 10_000 })
        #expect(outputs[1].destination == .file(.init(path: "log/out.jsonl", maxBytes: 10_485_760, keep: 5)))
        guard case .webhook(let hook) = outputs[2].destination else {
            Issue.record("not a webhook")
            return
        }
        #expect(hook.url.absoluteString == "https://hooks.example/agent")
        #expect(hook.batchSize == 100 && hook.batchInterval == 1 && hook.timeout == 5 && hook.maxRetries == 5)
        #expect(hook.retryInitialDelay == 0.5 && hook.retryMaxDelay == 30 && hook.headers.isEmpty)
    }

    @Test func everySettingIsRead() throws {
        let output = try OutputConfiguration(json: [
            "type": "webhook", "name": "ops", "url": "http://127.0.0.1:9/x?y=1", "batch_size": 7, "batch_interval": 0.25,
            "timeout": 2.5, "max_retries": 0, "retry_initial_delay": 0, "retry_max_delay": 4, "buffer": 50,
            "headers": ["X-One": "1"], "kinds": ["message"],
        ], environment: [:])
        #expect(output.name == "ops" && output.buffer == 50 && output.kinds == [.message])
        #expect(output.destination == .webhook(.init(
            url: URL(string: "http://127.0.0.1:9/x?y=1")!, batchSize: 7, batchInterval: 0.25, timeout: 2.5, maxRetries: 0,
            retryInitialDelay: 0, retryMaxDelay: 4, headers: [.init(name: "X-One", value: "1")]
        )))
    }

    @Test func environmentReferencesAreResolvedAndNamesKeepThemHidden() throws {
        let environment = ["HOOK_HOST": "hooks.example", "TOKEN": "s3cret", "EMPTY": ""]
        let output = try OutputConfiguration(json: [
            "type": "webhook", "url": "https://user:pw@${env:HOOK_HOST}/in?key=abc",
            "headers": ["Authorization": "Bearer ${env:TOKEN}${env:EMPTY}", "X-Literal": "${HOME} stays"],
        ], environment: environment)
        guard case .webhook(let hook) = output.destination else {
            Issue.record("not a webhook")
            return
        }
        #expect(hook.url.absoluteString == "https://user:pw@hooks.example/in?key=abc")
        #expect(hook.headers == [.init(name: "Authorization", value: "Bearer s3cret"), .init(name: "X-Literal", value: "${HOME} stays")])
        // Neither resolved values nor user info or query appear in the name shown in status.
        #expect(output.name == "webhook https://${env:HOOK_HOST}/in")
    }

    @Test func invalidValuesFromTheEnvironmentAreNotShownInErrors() {
        let environment = ["HOOK_URL": "ftp://S3CR3T-HOST/x?token=S3CR3T", "TOKEN": "S3CR3T\r\nX-Injected: 1"]
        let url = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration(json: ["type": "webhook", "url": "${env:HOOK_URL}"], environment: environment)
        }
        #expect(url?.description == #"/url: expected an http:// or https:// URL, found "${env:HOOK_URL}""#)
        let header = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration(json: ["type": "webhook", "url": "http://127.0.0.1/", "headers": ["X-Token": "${env:TOKEN}"]],
                                    environment: environment)
        }
        #expect(header?.description.contains("line break") == true)
        #expect(header?.description.contains("S3CR3T") == false)
    }

    /// Foundation gave no port for one past Int's range, so the POST went to port 80, and
    /// getaddrinfo took 70000 as 4464: both were accepted by validation and by the start.
    @Test(arguments: ["99999999999999999999", "70000", "65536", "0"])
    func webhookPortOutsideOneTo65535IsRefused(port: String) {
        let error = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration(json: ["type": "webhook", "url": .string("http://127.0.0.1:\(port)/hook")], environment: [:])
        }
        #expect(error?.pointer.description == "/url")
        #expect(error?.message.contains("expected a port from 1 to 65535 in the URL, found \"\(port)\"") == true, "\(String(describing: error))")
    }

    @Test(arguments: ["http://127.0.0.1:1/", "https://h:65535/x", "http://[::1]:8080/", "http://[::1]/", "http://u:p@h:80/",
                      "http://h:/", "http://h/a:b?c=:99999999"])
    func webhookURLWithAValidPortOrNoneIsAccepted(url: String) throws {
        _ = try OutputConfiguration(json: ["type": "webhook", "url": .string(url)], environment: [:])
    }

    @Test func webhookPortFromTheEnvironmentIsNotShownWhenRefused() {
        let error = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration(json: ["type": "webhook", "url": "http://${env:HOOK_HOST}/"], environment: ["HOOK_HOST": "S3CR3T:99999"])
        }
        #expect(error?.description == #"/url: expected a port from 1 to 65535 in the URL, found "http://${env:HOOK_HOST}/""#)
    }

    @Test func missingEnvironmentVariableIsAnErrorNamingIt() {
        let header = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration(json: [
                "type": "webhook", "url": "http://127.0.0.1/", "headers": ["Authorization": "Bearer ${env:NO_SUCH_TOKEN}"],
            ], environment: [:])
        }
        #expect(header?.pointer.description == "/headers/Authorization")
        #expect(header?.message.contains("environment variable NO_SUCH_TOKEN is not set") == true)

        let url = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration.list(json: [["type": "stdout"], ["type": "webhook", "url": "${env:HOOK_URL}"]], environment: [:])
        }
        #expect(url?.description == "/1/url: environment variable HOOK_URL is not set (referenced as ${env:HOOK_URL})")
    }

    @Test(arguments: [
        (#"{"path": "x"}"#, "", "missing required property \"type\""),
        (#"{"type": "syslog"}"#, "/type", "unknown output type \"syslog\""),
        (#"{"type": "file"}"#, "", "missing required property \"path\""),
        (#"{"type": "file", "path": ""}"#, "/path", "empty string"),
        (#"{"type": "file", "path": "a", "max_bytes": 0}"#, "/max_bytes", "expected an integer ≥ 1, found 0"),
        (#"{"type": "file", "path": "a", "keep": 1.5}"#, "/keep", "expected an integer ≥ 0"),
        (#"{"type": "stdout", "path": "a"}"#, "/path", "unknown property \"path\" for a stdout output"),
        (#"{"type": "stdout", "kinds": []}"#, "/kinds", "non-empty array"),
        (#"{"type": "stdout", "kinds": ["alert"]}"#, "/kinds/0", "expected \"event\" or \"message\""),
        (#"{"type": "stdout", "buffer": 0}"#, "/buffer", "expected an integer ≥ 1"),
        (#"{"type": "webhook", "url": "ftp://x/"}"#, "/url", "expected an http:// or https:// URL"),
        (#"{"type": "webhook", "url": "http://x/", "timeout": 0}"#, "/timeout", "expected a number > 0"),
        (#"{"type": "webhook", "url": "http://x/", "batch_interval": "1s"}"#, "/batch_interval", "found \"1s\" (string)"),
        (#"{"type": "webhook", "url": "http://x/", "headers": {"Content-Length": "1"}}"#, "/headers/Content-Length", "set by the runtime"),
        (#"{"type": "webhook", "url": "http://x/", "headers": {"Bad Name": "1"}}"#, "/headers/Bad Name", "not a valid HTTP header name"),
        (#"{"type": "webhook", "url": "http://x/", "headers": {"X": "${env:"}}"#, "/headers/X", "malformed environment reference"),
    ])
    func nonsenseIsRefusedWithItsLocation(json: String, pointer: String, message: String) throws {
        let value = try JSONValue.parse(json)
        let error = #expect(throws: OutputConfigurationError.self) {
            try OutputConfiguration(json: value, environment: [:])
        }
        #expect(error?.pointer.description == pointer)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test func schemaCompilesAndAgreesWithTheParser() throws {
        let validator = try JSONSchemaValidator(schema: ["type": "array", "items": OutputConfiguration.schema])
        let valid: JSONValue = [
            ["type": "stdout", "kinds": ["message"]],
            ["type": "file", "path": "out.jsonl", "max_bytes": 1000, "keep": 0, "buffer": 10],
            ["type": "webhook", "url": "${env:HOOK}", "headers": ["Authorization": "Bearer ${env:T}"], "batch_interval": 0.5],
        ]
        #expect(validator.validate(valid).isEmpty, "\(validator.validate(valid))")

        let invalid: [JSONValue] = [
            [["type": "stdout", "path": "x"]],
            [["type": "file"]],
            [["type": "file", "path": "x", "url": "http://x/"]],
            [["type": "webhook", "url": "ftp://x/"]],
            [["type": "webhook", "url": "http://x/", "retries": 3]],
            [["type": "mail"]],
        ]
        for document in invalid {
            #expect(!validator.validate(document).isEmpty, "\(document) should be invalid")
            #expect(throws: OutputConfigurationError.self) { try OutputConfiguration.list(json: document, environment: [:]) }
        }
        #expect(!validator.validate([["type": "stdout", "kinds": ["event", "event"]]]).isEmpty)
    }

    @Test func backoffDoublesUpToItsCap() {
        let delays = (1...6).map { WebhookSink.delay(beforeRetry: $0, initial: 0.5, maximum: 5) }
        #expect(delays == [0.5, 1, 2, 4, 5, 5])
        #expect(WebhookSink.delay(beforeRetry: 1, initial: 0, maximum: 30) == WebhookSink.minimumDelay)
    }

    @Test func statusLineParsingSkipsInterimResponses() {
        #expect(HTTPStatusLine.parse(Array("HTTP/1.1 20".utf8)) == .incomplete)
        #expect(HTTPStatusLine.parse(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)) == .status(204))
        #expect(HTTPStatusLine.parse(Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nA: b\r\n\r\n".utf8)) == .status(503))
        #expect(HTTPStatusLine.parse(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) == .malformed("SSH-2.0-OpenSSH"))
    }
}
