import Foundation
import JSONSchema

extension SettingsValidator {
    /// Replaces `${env:NAME}` in every string of a process's settings with the variable's
    /// value, so that secrets live in the environment, not in settings files. Problems are
    /// returned with their JSON pointer (relative to the process).
    static func resolvingEnvironment(_ value: JSONValue, at pointer: String = "", environment: [String: String],
                                     problems: inout [(pointer: String, message: String)]) -> JSONValue {
        switch value {
        case .string(let text):
            guard EnvironmentReferences.containsReference(text) else { return value }
            do {
                return .string(try EnvironmentReferences.resolve(text, environment: environment))
            } catch {
                problems.append((pointer, error.message))
                return value
            }
        case .array(let items):
            return .array(items.enumerated().map { resolvingEnvironment($0.element, at: "\(pointer)/\($0.offset)", environment: environment, problems: &problems) })
        case .object(let object):
            var resolved = object
            for (key, item) in object {
                resolved[key] = resolvingEnvironment(item, at: pointer + "/" + JSONPointer.escape(key), environment: environment, problems: &problems)
            }
            return .object(resolved)
        default:
            return value
        }
    }
}
