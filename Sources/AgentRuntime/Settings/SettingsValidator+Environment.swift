import AgentBase
import Foundation
import JSONSchema

extension SettingsValidator {
    /// Replaces `${env:NAME}` in every string of a process's settings with the variable's
    /// value, so that secrets live in the environment, not in settings files. Problems are
    /// returned with their JSON pointer (relative to the process); every resolved string is
    /// recorded in `secrets` (at `base` + its pointer) so that messages never show it.
    static func resolvingEnvironment(_ value: JSONValue, at pointer: String = "", base: String = "", environment: [String: String],
                                     problems: inout [(pointer: String, message: String)],
                                     secrets: inout EnvironmentSecrets) -> JSONValue {
        switch value {
        case .string(let text):
            guard EnvironmentReferences.containsReference(text) else { return value }
            do {
                let resolved = try EnvironmentReferences.resolve(text, environment: environment)
                secrets.add(pointer: base + pointer, written: text, value: resolved)
                return .string(resolved)
            } catch {
                problems.append((pointer, error.message))
                return value
            }
        case .array(let items):
            return .array(items.enumerated().map {
                resolvingEnvironment($0.element, at: "\(pointer)/\($0.offset)", base: base, environment: environment, problems: &problems, secrets: &secrets)
            })
        case .object(let object):
            var resolved = object
            for (key, item) in object {
                resolved[key] = resolvingEnvironment(item, at: pointer + "/" + JSONPointer.escape(key), base: base, environment: environment,
                                                     problems: &problems, secrets: &secrets)
            }
            return .object(resolved)
        default:
            return value
        }
    }
}
