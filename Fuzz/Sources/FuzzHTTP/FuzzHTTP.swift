@testable import AgentCommands
import AgentRuntime

/// The HTTP front's request path on arbitrary request targets: which command a method and a
/// raw target resolve to, as the router resolves them (``RoutePath``, used by the access
/// check and the 405 table), and whether the request needs the admin role. The first byte
/// picks the method and a respelling; the rest is the target. Properties: a respelling of the
/// path (doubled or trailing slashes, an absolute-form URL, a query, a fragment) resolves to
/// the same command with the same parameters; a request that resolves to an admin command,
/// however spelled, needs the admin role (so the read role is refused); the resolved route's
/// template holds the path.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = input.first else { return 0 }
    let method = methods[Int(first) % methods.count]
    let target = String(decoding: input.dropFirst(), as: UTF8.self)
    let path = RoutePath.path(ofTarget: Substring(target))
    guard !path.isEmpty, !path.contains("?"), !path.contains("#") else { fatalError("the path of \(target) is \(path)") }
    let resolved = CommandCatalog.command(method: method, target: Substring(target))
    let needsAdmin = CommandCatalog.needsAdmin(method: method, target: Substring(target))
    if let resolved {
        guard !resolved.requiresAdmin || needsAdmin else { fatalError("\(method) \(target) runs \(resolved.name), an admin command, without the admin role") }
        guard let parameters = routeParameters(of: resolved, target: Substring(target)),
              parameters.count == resolved.pathParameters.count, parameters.values.allSatisfy({ !$0.isEmpty && !$0.contains("/") }) else {
            fatalError("\(method) \(target) resolves to \(resolved.path), whose parameters it does not fill")
        }
    }
    // Only a path (origin-form) is respelled: the router sees the same route in each spelling.
    guard target.hasPrefix("/") else { return 0 }
    let spelled = respell(target, Int(first) / methods.count)
    let again = CommandCatalog.command(method: method, target: Substring(spelled))
    guard again?.name == resolved?.name, again?.path == resolved?.path, again?.fixed == resolved?.fixed,
          CommandCatalog.needsAdmin(method: method, target: Substring(spelled)) == needsAdmin else {
        fatalError("\(method) \(target) resolves to \(resolved?.path ?? "nothing"), spelled \(spelled) to \(again?.path ?? "nothing")")
    }
    if let resolved {
        let parameters = routeParameters(of: resolved, target: Substring(target))
        guard routeParameters(of: resolved, target: Substring(spelled)) == parameters else {
            fatalError("\(target) and \(spelled) give \(resolved.path) different parameters")
        }
    }
    return 0
}

let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

/// `target` (a path) spelled another way that names the same route.
func respell(_ target: String, _ choice: Int) -> String {
    let end = target.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? target.endIndex
    let path = target[..<end]
    let rest = target[end...]
    switch choice % 6 {
    case 0: return "/" + path + rest
    case 1: return path + "/" + rest
    case 2: return path.replacingOccurrences(of: "/", with: "//") + rest
    case 3: return "http://fuzz.example:8080" + path + rest
    case 4: return path + "?follow=1&x=/api/settings" + (rest.hasPrefix("?") ? "&" + rest.dropFirst() : rest)
    default: return path + "#/api/settings"
    }
}

/// The values of `command`'s path parameters in `target` (escaped, as the router gives them),
/// by name; nil when the target is not on the command's route.
func routeParameters(of command: CommandDescription, target: Substring) -> [String: Substring]? {
    let template = RoutePath.segments(Substring(command.path))
    let parts = RoutePath.segments(RoutePath.path(ofTarget: target))
    guard RoutePath.matches(template, parts) else { return nil }
    var found: [String: Substring] = [:]
    for (pattern, part) in zip(template, parts) where RoutePath.isParameter(pattern) {
        found[String(pattern.dropFirst().dropLast())] = part
    }
    return found
}
