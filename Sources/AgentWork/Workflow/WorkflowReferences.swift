import Foundation
import JSONSchema

/// References to values in a workflow's step inputs, payloads, texts and `set` values, written
/// like the settings' `${env:NAME}`:
///
/// - `${input}` or `${input:/pointer}`: the run's input, or the value at a JSON pointer in it;
/// - `${steps:ID}` or `${steps:ID/pointer}`: an earlier step's output (or a value in it);
/// - `${vars:/name}` (and deeper pointers): the run's variables (set by `set` steps);
/// - `${memory:key}`: a shared memory key (agent-wide; `${memory:run/key}` the run's own).
///
/// One resolver for every place: a string that is exactly one reference becomes the value
/// with its JSON type; a reference inside a longer string is put in as text (a string as it
/// is, any other value as its JSON). `${env:…}` is left alone (the settings' own syntax).
package enum WorkflowReferences {
    package enum Source: String, CaseIterable {
        case input, steps, vars, memory
    }

    package struct Reference: Equatable {
        package var source: Source
        /// The step id (`steps`) or the memory key (`memory`); empty otherwise.
        package var name: String
        /// A JSON pointer into the value ("" for the whole).
        package var pointer: String
        package var range: Range<String.Index>
        /// As written, for messages.
        package var text: String
    }

    /// Where references read their values at run time.
    package struct Values {
        package var input: JSONValue
        /// The latest output of each step that has one.
        package var outputs: [String: JSONValue]
        package var variables: JSONObject
        /// A memory key's value (nil: not set); `run` for the run's own scope.
        package var memory: (_ key: String, _ run: Bool) -> JSONValue? = { _, _ in nil }
    }

    package struct Problem: Error, Equatable {
        package var message: String
    }

    /// The references in `text`, and the problems of malformed ones (an unknown source, a pointer
    /// that does not start with `/`).
    package static func references(in text: String) -> (references: [Reference], problems: [String]) {
        var found: [Reference] = []
        var problems: [String] = []
        var from = text.startIndex
        while let open = text.range(of: "${", range: from..<text.endIndex) {
            guard let close = text.range(of: "}", range: open.upperBound..<text.endIndex) else { break }
            let inner = String(text[open.upperBound..<close.lowerBound])
            let written = "${" + inner + "}"
            from = close.upperBound
            let head = inner.prefix { $0 != ":" }
            let rest = inner.count > head.count ? String(inner.dropFirst(head.count + 1)) : nil
            if head == "env" { continue }
            guard let source = Source(rawValue: String(head)) else {
                problems.append("\(written): unknown reference \"\(head)\"; expected ${input:/pointer}, ${steps:ID/pointer}, ${vars:/name} or ${memory:key}")
                continue
            }
            var reference = Reference(source: source, name: "", pointer: "", range: open.lowerBound..<close.upperBound, text: written)
            switch source {
            case .input, .vars:
                let pointer = rest ?? ""
                // A pointer's `/` as a scalar: a field name may begin with a combining mark.
                if !pointer.isEmpty, pointer.unicodeScalars.first != "/" {
                    problems.append("\(written): expected a JSON pointer after \"\(head):\" (e.g. ${\(head):/\(pointer)})")
                    continue
                }
                if source == .vars, pointer.isEmpty {
                    problems.append("\(written): name the variable, e.g. ${vars:/amount}")
                    continue
                }
                reference.pointer = pointer
            case .steps, .memory:
                guard let rest, !rest.isEmpty else {
                    problems.append("\(written): name the \(source == .steps ? "step, e.g. ${steps:classify} or ${steps:classify/label}" : "key, e.g. ${memory:last_order}")")
                    continue
                }
                if source == .steps, let slash = rest.firstIndex(of: "/") {
                    reference.name = String(rest[..<slash])
                    reference.pointer = String(rest[slash...])
                } else {
                    reference.name = rest
                }
            }
            if JSONPointer(reference.pointer) == nil {
                problems.append("\(written): \"\(reference.pointer)\" is not a JSON pointer")
                continue
            }
            found.append(reference)
        }
        return (found, problems)
    }

    /// Every reference in `value` (strings at any depth) with the pointer of its string below `at`.
    package static func collect(_ value: JSONValue, at pointer: String) -> (references: [(pointer: String, reference: Reference)], problems: [(pointer: String, message: String)]) {
        var references: [(pointer: String, reference: Reference)] = []
        var problems: [(pointer: String, message: String)] = []
        func walk(_ value: JSONValue, _ pointer: String) {
            switch value {
            case .string(let text):
                let (found, bad) = Self.references(in: text)
                references += found.map { (pointer, $0) }
                problems += bad.map { (pointer, $0) }
            case .array(let items):
                for (index, item) in items.enumerated() { walk(item, pointer + "/\(index)") }
            case .object(let object):
                for (key, item) in object { walk(item, pointer + "/" + JSONPointer.escape(key)) }
            default:
                break
            }
        }
        walk(value, pointer)
        return (references, problems)
    }

    /// Whether `value` holds no reference (it can be checked against a schema as it is).
    package static func isLiteral(_ value: JSONValue) -> Bool {
        collect(value, at: "").references.isEmpty
    }

    /// The keywords of a JSON Schema whose value is a number.
    private static let numericKeywords: Set<String> = [
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
        "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains",
    ]

    /// A schema with references (a `wait_event`'s `where`) made compilable before they are
    /// resolved: a reference where a number is expected becomes 1, in a `pattern` the empty
    /// pattern; any other stays the string it is. Validation compiles this; the step compiles
    /// the resolved schema when it starts.
    package static func placeholders(in schema: JSONValue) -> JSONValue {
        func walk(_ value: JSONValue, key: String?) -> JSONValue {
            switch value {
            case .string(let text):
                guard !references(in: text).references.isEmpty, let key else { return value }
                if numericKeywords.contains(key) { return 1 }
                return key == "pattern" ? "" : value
            case .array(let items):
                return .array(items.map { walk($0, key: nil) })
            case .object(let object):
                var result = JSONObject()
                for (name, item) in object { result[name] = walk(item, key: name) }
                return .object(result)
            default:
                return value
            }
        }
        return walk(schema, key: nil)
    }

    /// `value` with every reference replaced (see the type's rule).
    package static func resolve(_ value: JSONValue, with values: Values) -> Result<JSONValue, Problem> {
        do {
            return .success(try resolveThrowing(value, values))
        } catch let problem as Problem {
            return .failure(problem)
        } catch {
            return .failure(Problem(message: "\(error)"))
        }
    }

    private static func resolveThrowing(_ value: JSONValue, _ values: Values) throws -> JSONValue {
        switch value {
        case .string(let text):
            let found = references(in: text).references
            guard !found.isEmpty else { return value }
            if found.count == 1, found[0].range == text.startIndex..<text.endIndex {
                return try lookUp(found[0], values)
            }
            var result = ""
            var position = text.startIndex
            for reference in found {
                result += text[position..<reference.range.lowerBound]
                let resolved = try lookUp(reference, values)
                result += resolved.stringValue ?? resolved.serialized()
                position = reference.range.upperBound
            }
            result += text[position...]
            return .string(result)
        case .array(let items):
            return .array(try items.map { try resolveThrowing($0, values) })
        case .object(let object):
            var resolved = JSONObject()
            for (key, item) in object { resolved[key] = try resolveThrowing(item, values) }
            return .object(resolved)
        default:
            return value
        }
    }

    private static func lookUp(_ reference: Reference, _ values: Values) throws -> JSONValue {
        let base: JSONValue?
        switch reference.source {
        case .input: base = values.input
        case .vars: base = .object(values.variables)
        case .steps:
            base = values.outputs[reference.name]
            if base == nil { throw Problem(message: "\(reference.text): the step \"\(reference.name)\" has no output in this run (it did not run, or has not finished)") }
        case .memory:
            let run = reference.name.hasPrefix("run/")
            let key = run ? String(reference.name.dropFirst(4)) : reference.name
            guard let stored = values.memory(key, run) else {
                throw Problem(message: "\(reference.text): the memory key \"\(key)\" is not set\(run ? " in this run's scope" : "")")
            }
            return stored
        }
        guard let base, let pointer = JSONPointer(reference.pointer), let found = pointer.resolve(in: base) else {
            throw Problem(message: "\(reference.text): no value at \"\(reference.pointer)\" in the \(reference.source == .steps ? "output of step \"\(reference.name)\"" : reference.source == .input ? "run's input" : "run's variables")")
        }
        return found
    }
}
