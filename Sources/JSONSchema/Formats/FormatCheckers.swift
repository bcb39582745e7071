/// The `format` checkers, by format name. Unknown formats have no checker and always pass.
enum FormatCheckers {
    /// The checker for `name`, or `nil` when the format is unknown.
    static func checker(for name: String) -> (@Sendable (String) -> Bool)? {
        switch name {
        case "date-time": return DateTimeFormats.isDateTime
        case "date": return DateTimeFormats.isDate
        case "time": return DateTimeFormats.isTime
        case "duration": return DateTimeFormats.isDuration
        case "email": return NetworkFormats.isEmail
        case "idn-email": return NetworkFormats.isIDNEmail
        case "hostname": return NetworkFormats.isHostname
        case "idn-hostname": return NetworkFormats.isIDNHostname
        case "ipv4": return NetworkFormats.isIPv4
        case "ipv6": return NetworkFormats.isIPv6
        case "uri": return URIFormats.isURI
        case "uri-reference": return URIFormats.isURIReference
        case "iri": return URIFormats.isIRI
        case "iri-reference": return URIFormats.isIRIReference
        case "uri-template": return URIFormats.isURITemplate
        case "json-pointer": return URIFormats.isJSONPointer
        case "relative-json-pointer": return URIFormats.isRelativeJSONPointer
        case "uuid": return isUUID
        case "regex": return isRegex
        default: return nil
        }
    }

    /// How a format is named in messages ("expected a date-time, found …").
    static func noun(for name: String) -> String {
        switch name {
        case "date-time": return "a date-time"
        case "date": return "a date"
        case "time": return "a time"
        case "duration": return "a duration"
        case "email": return "an email address"
        case "idn-email": return "an internationalized email address"
        case "hostname": return "a hostname"
        case "idn-hostname": return "an internationalized hostname"
        case "ipv4": return "an IPv4 address"
        case "ipv6": return "an IPv6 address"
        case "uri": return "an absolute URI"
        case "uri-reference": return "a URI reference"
        case "iri": return "an absolute IRI"
        case "iri-reference": return "an IRI reference"
        case "uri-template": return "a URI template"
        case "json-pointer": return "a JSON pointer"
        case "relative-json-pointer": return "a relative JSON pointer"
        case "uuid": return "a UUID"
        case "regex": return "a regular expression"
        default: return "a valid \(name)"
        }
    }

    /// `8-4-4-4-12` hexadecimal digits.
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (i, b) in bytes.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard b == UInt8(ascii: "-") else { return false }
            } else {
                let hex = (b >= 48 && b <= 57) || (b | 0x20 >= 97 && b | 0x20 <= 102)
                guard hex else { return false }
            }
        }
        return true
    }

    /// ECMA-262 regular expression syntax.
    static func isRegex(_ text: String) -> Bool {
        (try? ECMARegexTranslator.translate(text)) != nil
    }
}
