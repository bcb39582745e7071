import AgentCommands

/// Every path the API serves with the methods it takes there: the commands' routes and the
/// documented other routes. Hummingbird answers 404 for a known path with a method it has no
/// handler for; this table turns that into 405 with `Allow`.
struct RouteTable: Sendable {
    private var entries: [(segments: [Substring], methods: Set<String>)] = []
    /// The answer for each path written as a route declares it without parameters
    /// (`/api/status`): one lookup for the paths clients call most, instead of a scan.
    private var known: [String: [String]] = [:]

    init(commands: [CommandDescription], routes: [RouteDescription]) {
        for command in commands { add(command.method, command.path) }
        for route in routes { add(route.method, route.path) }
        for path in commands.map(\.path) + routes.map(\.path) where !path.contains("{") {
            known[path] = scan(path)
        }
    }

    /// A GET route takes HEAD too (the front serves it, see ``ServerRun``).
    private mutating func add(_ method: String, _ path: String) {
        let segments = Self.segments(path)
        let methods: Set<String> = method == "GET" ? ["GET", "HEAD"] : [method]
        if let index = entries.firstIndex(where: { $0.segments == segments }) {
            entries[index].methods.formUnion(methods)
        } else {
            entries.append((segments, methods))
        }
    }

    /// The methods `path` takes (sorted), or nil when no route has that path.
    func methods(for path: String) -> [String]? {
        if let methods = known[path] { return methods }
        return scan(path)
    }

    private func scan(_ path: String) -> [String]? {
        let parts = Self.segments(path)
        var found = Set<String>()
        for entry in entries where Self.matches(entry.segments, parts) { found.formUnion(entry.methods) }
        return found.isEmpty ? nil : found.sorted()
    }

    /// As Hummingbird splits paths (see ``RoutePath``).
    static func segments(_ path: String) -> [Substring] {
        RoutePath.segments(Substring(path))
    }

    static func matches(_ template: [Substring], _ parts: [Substring]) -> Bool {
        RoutePath.matches(template, parts)
    }
}
