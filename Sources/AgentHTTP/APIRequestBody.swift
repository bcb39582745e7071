import AgentBase
import Foundation
import Hummingbird
import JSONSchema
import NIOCore

/// How the HTTP front reads a request's body: one rule for every route that takes one (the
/// command routes, the login, the CSRF check of a form), decided by `Content-Type` and, for a
/// form, by the body's first byte:
/// - none, `application/json` or any `application/…+json` (RFC 6839), with no `charset` or
///   UTF-8: JSON; a leading UTF-8 byte order mark is skipped (RFC 8259 allows it);
/// - `application/x-www-form-urlencoded`: an HTML form's fields — unless the body is JSON, which
///   no form encoder writes (a browser sends `name=value` pairs, `{` as `%7B`): JSON sent with
///   curl `-d`'s default type is read as JSON (one that starts with `{` or `[` is refused as
///   JSON when it does not parse, not read as a form);
/// - anything else (`text/plain`, `multipart/form-data`, the patch types, another charset): 415
///   `unsupported_media_type`, saying what was expected and what was found.
///
/// An empty body (or one of whitespace) is no fields, whatever its type.
enum APIRequestBody {
    /// What a body holds.
    enum Content {
        case empty
        case json(JSONValue)
        /// An HTML form's fields, in order.
        case form([(name: String, value: String)])
    }

    /// A body refused before it reaches a route.
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var code: String
        var message: String
        var pointer: String?

        var response: Response { APIResponse.error(status, code: code, message, pointer: pointer) }
    }

    /// What the refusals say is accepted.
    static let expected = "application/json (or no Content-Type; UTF-8)"

    static let formType = "application/x-www-form-urlencoded"

    /// Reads at most `limit` bytes of `request`'s body and decodes them by the rule.
    static func read(_ request: Request, limit: Int) async -> Result<Content, Refusal> {
        await collect(request, limit: limit).flatMap { decode($0, contentType: request.headers[.contentType]) }
    }

    /// At most `limit` bytes of `request`'s body: past them 413 `too_large`; a body that cannot
    /// be read (a chunk size that is no number, a chunk longer than it said) 400 `invalid`.
    static func collect(_ request: Request, limit: Int) async -> Result<ByteBuffer, Refusal> {
        do {
            return .success(try await request.body.collect(upTo: limit))
        } catch is NIOTooManyBytesError {
            return .failure(Refusal(status: .contentTooLarge, code: "too_large", message: "the request body is larger than \(limit) bytes (http.max_body_bytes)"))
        } catch {
            return .failure(Refusal(status: .badRequest, code: "invalid", message: "the request body could not be read (\(error)): check its Content-Length or chunked framing"))
        }
    }

    /// Decodes `body` sent with `contentType` (nil: the header is absent).
    static func decode(_ body: ByteBuffer, contentType: String?) -> Result<Content, Refusal> {
        let bytes = withoutByteOrderMark(body.readableBytesView)
        guard bytes.contains(where: { !isWhitespace($0) }) else { return .success(.empty) }
        switch kind(of: contentType) {
        case .failure(let refusal): return .failure(refusal)
        case .success(.form) where !startsLikeJSON(bytes):
            if let value = try? JSONValue.parse(bytes) { return .success(.json(value)) }
            return formFields(bytes).map(Content.form)
        case .success:
            do throws(JSONParseError) {
                return .success(.json(try JSONValue.parse(bytes)))
            } catch {
                let refusal = CommandError.notJSON(error, in: "the body")
                return .failure(Refusal(status: .badRequest, code: "invalid", message: refusal.message, pointer: refusal.pointer))
            }
        }
    }

    /// An HTML form's `name=value` fields, percent-decoded (`+` a space), in order. Refused,
    /// as a JSON body's repeated key and bad UTF-8 are: a field given twice (the last one won,
    /// unseen by whoever checked the first) and a name or value that is not percent-encoded
    /// UTF-8 (such a value was read as empty, such a field left out).
    static func formFields(_ bytes: ByteBufferView) -> Result<[(name: String, value: String)], Refusal> {
        var fields: [(name: String, value: String)] = []
        var names = Set<String>()
        for pair in bytes.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = formText(parts[0]) else {
                return .failure(Refusal(status: .badRequest, code: "invalid", message: "a form field's name is not percent-encoded UTF-8", pointer: ""))
            }
            let pointer = "/" + JSONPointer.escape(name)
            guard let value = parts.count > 1 ? formText(parts[1]) : "" else {
                return .failure(Refusal(status: .badRequest, code: "invalid", message: "\(pointer): the form field's value is not percent-encoded UTF-8", pointer: pointer))
            }
            guard names.insert(name).inserted else {
                return .failure(Refusal(status: .badRequest, code: "invalid", message: "the form field \"\(name)\" appears twice; keep one of them", pointer: pointer))
            }
            fields.append((name, value))
        }
        return .success(fields)
    }

    /// A form's name or value decoded, nil when it is not percent-encoded UTF-8.
    static func formText(_ raw: ByteBufferView.SubSequence) -> String? {
        String(validating: Array(raw), as: UTF8.self)?.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    enum Kind { case json, form }

    /// What `contentType` asks the body to be read as, or why it cannot be.
    static func kind(of contentType: String?) -> Result<Kind, Refusal> {
        guard let contentType else { return .success(.json) }
        var parts = contentType.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let type = parts.removeFirst().lowercased()
        let found = CSRFProtection.shown(contentType)
        if type == formType { return .success(.form) }
        guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
            return .failure(unsupported("expected \(expected); found Content-Type \(found)"))
        }
        if type == "application/merge-patch+json" || type == "application/json-patch+json" {
            return .failure(unsupported("expected \(expected); found Content-Type \(found): the API applies no patches — send the whole object (PUT takes the complete definition)"))
        }
        for parameter in parts where !parameter.isEmpty {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "charset" else { continue }
            let charset = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
            guard charset == "utf-8" || charset == "utf8" else {
                return .failure(unsupported("expected \(expected); found Content-Type \(found): JSON is read as UTF-8 only"))
            }
        }
        return .success(.json)
    }

    static func unsupported(_ message: String) -> Refusal {
        Refusal(status: .unsupportedMediaType, code: "unsupported_media_type", message: message)
    }

    /// `bytes` without a leading UTF-8 byte order mark.
    static func withoutByteOrderMark(_ bytes: ByteBufferView) -> ByteBufferView {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes
    }

    /// Whether the first byte after JSON's whitespace opens an object or an array.
    static func startsLikeJSON(_ bytes: ByteBufferView) -> Bool {
        let first = bytes.first { !isWhitespace($0) }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
