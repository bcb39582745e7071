import AgentCommands
import Hummingbird
import JSONSchema

/// JSON answers and errors of the API.
enum APIResponse {
    /// `value` as JSON with `status`; never cached.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers = jsonHeaders
        headers.append(contentsOf: extra)
        var buffer = ByteBuffer()
        buffer.writeString(value.serialized())
        buffer.writeInteger(UInt8(ascii: "\n"))
        return Response(status: status, headers: headers, body: .init(byteBuffer: buffer))
    }

    /// The headers of every JSON answer, made once.
    static let jsonHeaders: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]

    /// A command's answer, already serialized, with the HTTP status for it.
    static func json(_ answer: CommandCenter.RenderedAnswer) -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(answer.bytes.count + 1)
        buffer.writeBytes(answer.bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return Response(status: status(of: answer.json), headers: headers(of: answer.json), body: .init(byteBuffer: buffer))
    }

    /// A refusal for now (`unavailable`: the store cannot write, the agent is stopping) says when
    /// to try again: its `retry_after`, else 5 s.
    static func headers(of answer: JSONValue) -> HTTPFields {
        guard answer["ok"]?.boolValue == false, answer["code"]?.stringValue == "unavailable" else { return jsonHeaders }
        var headers = jsonHeaders
        headers[.retryAfter] = String(answer["retry_after"]?.numberValue?.intValue ?? 5)
        return headers
    }

    /// `{"ok": false, "error": message, "code": code, "pointer": pointer}` with `status`.
    static func error(_ status: HTTPResponse.Status, code: String, _ message: String, pointer: String? = nil, headers: HTTPFields = [:]) -> Response {
        var object: JSONObject = ["ok": false, "error": .string(message), "code": .string(code)]
        if let pointer { object["pointer"] = .string(pointer) }
        return json(.object(object), status: status, headers: headers)
    }

    /// The HTTP status for a command's answer.
    static func status(of answer: JSONValue) -> HTTPResponse.Status {
        guard answer["ok"]?.boolValue == false else { return .ok }
        return switch answer["code"]?.stringValue {
        case "invalid"?: .badRequest
        case "not_found"?: .notFound
        case "conflict"?: .conflict
        case "unavailable"?: .serviceUnavailable
        case "forbidden"?: .forbidden
        case "unauthorized"?: .unauthorized
        case "too_large"?: .contentTooLarge
        case "rate_limited"?: .tooManyRequests
        case "precondition_failed"?: .preconditionFailed
        // A command that ran and was refused (a process already running, a reload whose
        // settings are invalid): the request was fine, the state did not allow it.
        default: .conflict
        }
    }
}
