/// The command an HTTP request names, found as the router finds it (see ``RoutePath``): the
/// access check decides on this command, never on the path's spelling.
extension CommandCatalog {
    /// A command's route as segments, worked out once.
    private static let routes: [(method: String, segments: [Substring], command: CommandDescription)] = all.map {
        ($0.method, RoutePath.segments(Substring($0.path)), $0)
    }

    /// The command of each route without path parameters (`GET /api/status`), by `METHOD path`:
    /// one lookup for the paths clients call most, instead of a scan.
    private static let exact: [String: CommandDescription] = Dictionary(
        all.filter { !$0.path.contains("{") }.map { ($0.method + " " + $0.path, $0) }, uniquingKeysWith: { first, _ in first })

    /// The first command whose route takes `method` (HEAD as GET) and `target` (a request
    /// target: a path, or an absolute-form URL), or nil.
    public static func command(method: String, target: Substring) -> CommandDescription? {
        let method = method == "HEAD" ? "GET" : method
        if let known = exact[method + " " + target] { return known }
        let parts = RoutePath.segments(RoutePath.path(ofTarget: target))
        return routes.first { $0.method == method && RoutePath.matches($0.segments, parts) }?.command
    }

    /// Whether a request needs the admin role: a command route as the catalog declares it
    /// (chat is a POST that changes a conversation; validate changes nothing but loads the
    /// modules a document names), any other route unless it is GET or HEAD.
    public static func needsAdmin(method: String, target: Substring) -> Bool {
        if let command = command(method: method, target: target) { return command.requiresAdmin }
        return !(method == "GET" || method == "HEAD")
    }
}
