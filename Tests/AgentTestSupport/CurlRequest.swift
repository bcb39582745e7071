import Foundation

/// One HTTP exchange made with curl (the real client an operator uses): status, headers,
/// the cookies set and the body.
package struct CurlResponse {
    package var status: Int
    /// Header lines, names lowercased (a repeated header keeps each value).
    package var headers: [(name: String, value: String)]
    package var body: String
    /// Why curl could not make the exchange (refused, TLS failure), when it could not.
    package var failure: String?

    package func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    /// The `Set-Cookie` line for `name`.
    package func setCookie(_ name: String) -> String? {
        headers.first { $0.name == "set-cookie" && $0.value.hasPrefix(name + "=") }?.value
    }

    /// The value a `Set-Cookie` gives `name`.
    package func cookieValue(_ name: String) -> String? {
        setCookie(name).map { String($0.dropFirst(name.count + 1).prefix { $0 != ";" }) }
    }

    package var json: [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
    }

    package var description: String { "\(status) \(headers.map { "\($0.name): \($0.value)" }.joined(separator: "; ")) \(body) \(failure ?? "")" }
}

/// Makes a request with curl: `method` to `url`, with `headers` and `body`; `extra` curl
/// arguments (`--cacert FILE`). Never follows redirects.
package func curl(_ method: String, _ url: String, headers: [String: String] = [:], body: String? = nil, extra: [String] = []) throws -> CurlResponse {
    var arguments = ["-sS", "-i", "--max-time", "30", "-X", method]
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
    if body != nil { arguments += ["--data-binary", "@-"] }
    arguments += extra + [url]
    let result = try runProgram("/usr/bin/curl", arguments, input: body.map { Data($0.utf8) } ?? nil, timeout: 60)
    guard result.status == 0 else {
        return CurlResponse(status: 0, headers: [], body: "", failure: "curl exited \(result.status): \(result.stderr)")
    }
    // Skip interim answers (100 Continue).
    var text = result.stdout
    while text.hasPrefix("HTTP/1.1 100"), let end = text.range(of: "\r\n\r\n") { text = String(text[end.upperBound...]) }
    let parts = text.components(separatedBy: "\r\n\r\n")
    let head = parts.first ?? ""
    let responseBody = parts.dropFirst().joined(separator: "\r\n\r\n")
    var lines = head.components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst()
    let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
    let fields = lines.compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    if let parsed = URLComponents(string: url), parsed.scheme?.hasPrefix("http") == true {
        let target = parsed.percentEncodedPath + (parsed.percentEncodedQuery.map { "?" + $0 } ?? "")
        let type = fields.first { $0.0 == "content-type" }?.1
        HTTPAnswerCheck.check(method: method, target: target, status: status, contentType: type, body: responseBody)
    }
    return CurlResponse(status: status, headers: fields, body: responseBody)
}
