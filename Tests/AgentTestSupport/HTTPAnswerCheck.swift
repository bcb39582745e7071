/// A check of every answer the tests' HTTP clients (``RawHTTP``, ``HTTPProbe``, ``curl``)
/// receive: records an issue for each disagreement.
package protocol HTTPAnswerChecking: SendableMetatype {
    static func check(method: String, target: String, status: Int, contentType: String?, body: String)
}

/// The check of every answer: the OpenAPI agreement of the HTTP front's tests
/// (`AgentHTTPTests.OpenAPIAgreement`), which may import the front. This target depends on no
/// library of the runtime, so the check is found at run time: every test target links into
/// the one test binary, so a test of any layer that talks HTTP checks each answer it receives.
/// `OpenAPIAgreementTests` fails if it is not found.
package enum HTTPAnswerCheck {
    package static let checker: (any HTTPAnswerChecking.Type)? =
        _typeByName("14AgentHTTPTests16OpenAPIAgreementO") as? any HTTPAnswerChecking.Type

    package static func check(method: String, target: String, status: Int, contentType: String?, body: String) {
        checker?.check(method: method, target: target, status: status, contentType: contentType, body: body)
    }
}
