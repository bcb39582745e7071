import Hummingbird

/// A request refused by authentication or authorization: 401, 403, 429 or 503 as JSON, with
/// the headers the status calls for (`WWW-Authenticate`, `Retry-After`).
struct AccessRefusal: Error, HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var headers: HTTPFields
    /// The JSON pointer of the member at fault (a form field given twice), when one is.
    var pointer: String?

    init(_ status: HTTPResponse.Status, code: String, _ message: String, headers: HTTPFields = [:], pointer: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.pointer = pointer
    }

    /// 401 with `WWW-Authenticate: Bearer` (RFC 6750), `error="invalid_token"` when a token
    /// was given and is wrong.
    static func unauthorized(_ message: String, invalidToken: Bool = false) -> AccessRefusal {
        let challenge = invalidToken ? "Bearer realm=\"agent\", error=\"invalid_token\"" : "Bearer realm=\"agent\""
        return AccessRefusal(.unauthorized, code: "unauthorized", message, headers: [.wwwAuthenticate: challenge])
    }

    /// 401 for a request that came with no credentials at all, saying how to send them.
    static let credentialsRequired = unauthorized(
        "credentials required: send Authorization: Bearer TOKEN (a token of \"http\": {\"tokens\"}) or log in with POST /api/login")

    static func forbidden(_ message: String) -> AccessRefusal {
        AccessRefusal(.forbidden, code: "forbidden", message)
    }

    var response: Response { APIResponse.error(status, code: code, message, pointer: pointer, headers: headers) }

    func response(from request: Request, context: some RequestContext) throws -> Response { response }
}
