import AgentCore
import CAgentSystem
import Foundation

/// Sends one email over SMTP with libcurl, loaded with dlopen on first use exactly as for
/// https webhooks (``CurlTransport``): agents that send no email never map it.
///
/// Blocking: called on the notifications' own thread only.
package enum SMTPMailer {
    package enum Result: Equatable {
        /// Accepted; the server's last reply code (250).
        case sent(reply: Int)
        /// Not delivered, and why (secrets already hidden).
        case failed(String)
        /// `shouldAbort` said so (the agent stops).
        case interrupted
    }

    /// Why email cannot work on this machine, or nil.
    package static var problem: String? {
        agent_curl_problem().map {
            "email notifications need libcurl (libcurl.so.4, or the library AGENT_LIBCURL names; on Debian `apt-get install libcurl4`), which could not be loaded: \(String(cString: $0))"
        }
    }

    private final class Abort {
        let shouldAbort: () -> Bool
        init(_ shouldAbort: @escaping () -> Bool) { self.shouldAbort = shouldAbort }
    }

    /// Sends `subject` and `body` as configured by `email`; `shouldAbort` is asked now and then
    /// during the transfer.
    package static func send(
        _ email: NotificationSettings.Email, subject: String, body: String, date: Date = Date(), host: String,
        shouldAbort: @escaping () -> Bool
    ) -> Result {
        let message = self.message(from: email.from, to: email.to, subject: subject, body: body, date: date, host: host)
        let abort = Abort(shouldAbort)
        let check: agent_abort_check = { context in
            Unmanaged<Abort>.fromOpaque(context!).takeUnretainedValue().shouldAbort() ? 1 : 0
        }
        let tls: Int32 = switch email.starttls {
        case .required: Int32(AGENT_SMTP_TLS_REQUIRED)
        case .try: Int32(AGENT_SMTP_TLS_TRY)
        case .never: Int32(AGENT_SMTP_TLS_NEVER)
        }
        var reply = 0
        var error = [CChar](repeating: 0, count: 512)
        let recipients = email.to.map { strdup("<\($0)>") }
        defer { recipients.forEach { free($0) } }
        let result = withExtendedLifetime(abort) {
            recipients.map { UnsafePointer($0) }.withUnsafeBufferPointer { list in
                message.withUnsafeBytes { bytes in
                    agent_curl_smtp_send(
                        email.url, email.username, email.password, "<\(email.from)>", list.baseAddress, Int32(list.count),
                        bytes.baseAddress, bytes.count, tls, email.caFile,
                        max(1, Saturating.milliseconds(email.connectTimeout)), max(1, Saturating.milliseconds(email.timeout)),
                        check, Unmanaged.passUnretained(abort).toOpaque(), &reply, &error, error.count)
                }
            }
        }
        let text = email.redacted(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        switch result {
        case 0: return .sent(reply: reply)
        case 2: return .interrupted
        case 3: return .failed("timed out (connect_timeout \(email.connectTimeout.compactText) s, timeout \(email.timeout.compactText) s): \(text)")
        case -1: return .failed(problem ?? text)
        default: return .failed(text)
        }
    }

    // MARK: The message

    /// An RFC 5322 message with CRLF line ends: the subject on one line (folded and encoded
    /// when it is not short ASCII), the body as UTF-8 in base64 (no line is too long for SMTP,
    /// and a line of only "." in stderr cannot end the DATA early).
    package static func message(from: String, to: [String], subject: String, body: String, date: Date, host: String) -> [UInt8] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let domain = from.split(separator: "@").last.map(String.init) ?? host
        let lines = [
            "Date: \(formatter.string(from: date))",
            "From: \(from)",
            "To: \(to.joined(separator: ", "))",
            "Subject: \(encodedHeader(subject))",
            "Message-ID: <\(UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "X-Mailer: AgentRuntime",
            "",
            Data(body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n").utf8)
                .base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]),
        ]
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// The most characters of a subject kept (the rest is cut with "…").
    package static let longestSubject = 250

    /// `text` as a header value: control characters (a newline from an error message would
    /// start a header of its own) become spaces; printable ASCII stays as it is, anything else
    /// becomes RFC 2047 encoded words of at most 75 characters, one per folded line.
    package static func encodedHeader(_ text: String) -> String {
        var clean = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : $0 }))
        if clean.count > longestSubject { clean = String(clean.prefix(longestSubject - 1)) + "…" }
        if clean.unicodeScalars.allSatisfy({ $0.isASCII }) { return clean }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in clean {
            let bytes = Array(String(character).utf8)
            // 45 bytes make 60 characters of base64, plus 12 for "=?UTF-8?B?" and "?=".
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }
}
