/// A request target as the HTTP front's router reads it, so that every check made on a path
/// sees the route the router will run: `/api/settings/`, `//api/settings`, `/api//settings`
/// and `http://host/api/settings` are all the route `/api/settings` (the router splits a path
/// into its non-empty segments; the access check once looked the raw path up exactly, and a
/// reader reached an admin command by spelling it differently).
public enum RoutePath {
    /// The path of a request target: an absolute-form target's scheme and authority, the
    /// query and the fragment left out. Segments stay percent-encoded, as the router leaves them.
    public static func path(ofTarget target: Substring) -> Substring {
        var rest = target
        if rest.unicodeScalars.first != "/", let scheme = rest.range(of: "://") {
            rest = rest[scheme.upperBound...]
            rest = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }).map { rest[$0...] } ?? ""
        }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        return rest.isEmpty ? "/" : rest
    }

    /// The path's segments as the router matches them: empty ones (`//`, a trailing `/`) do
    /// not count. Split at the scalar `/`, as the router splits bytes: a `/` followed by a
    /// combining mark is one `Character`, which a split on characters would not cut.
    public static func segments(_ path: Substring) -> [Substring] {
        path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map(Substring.init)
    }

    /// Whether `parts` (a path's segments) fill `template` (a route's): `{name}` takes any
    /// one segment, anything else only itself.
    public static func matches(_ template: [Substring], _ parts: [Substring]) -> Bool {
        guard template.count == parts.count else { return false }
        return zip(template, parts).allSatisfy { pattern, part in
            isParameter(pattern) || pattern == part
        }
    }

    /// `{name}`.
    public static func isParameter(_ segment: Substring) -> Bool {
        segment.count > 1 && segment.hasPrefix("{") && segment.hasSuffix("}")
    }
}
