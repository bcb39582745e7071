/// The module libraries the fork server loaded before forking (at the supervisor's request):
/// every worker it forks afterwards inherits them mapped, relocated and checked, and skips its
/// own `dlopen` (about two thirds of a forked worker's start), and the workers share those
/// pages with the server instead of each relocating its own copy.
///
/// Written only by the fork server's single thread, between forks; read by a forked worker's
/// main thread before it starts any other: no lock is needed, and none may be taken across a
/// fork.
enum ServerPreloads {
    nonisolated(unsafe) private static var modules: [String: LoadedModule] = [:]

    /// Loads the library at `path` in the fork server. False when it cannot be loaded: the
    /// worker then loads it itself and reports why.
    static func load(_ path: String) -> Bool {
        if modules[path] != nil { return true }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let loaded = try? ModuleLoader.load(path: path, module: name) else { return false }
        modules[path] = loaded
        return true
    }

    /// The module loaded at `path` by the fork server before this worker was forked, if any.
    static func loaded(_ path: String) -> LoadedModule? { modules[path] }
}
