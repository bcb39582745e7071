@testable import AgentWork
import JSONSchema
@testable import AgentRuntime

/// The `{{input…}}` reference resolver on arbitrary command lines and inputs: `line NUL input`
/// (the input a JSON text). Properties: references come in order, each a `{{…}}` of the line;
/// substitution puts in exactly the value at each reference's path (a string as it is, any
/// other value as JSON), single-quoted in a shell line, or fails when the input lacks it; the
/// input's environment variables have valid names and bounded sizes; and a reference that the
/// shell-line check (``ShellPlacement``) lets through stands where `/bin/sh` (dash) reads
/// unquoted words — not in quotes, a comment or a here-document — so that its single-quoted
/// value cannot end a quote and run as shell code. `ShellOracle` reads the line as dash does.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReferences(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0) ?? bytes.endIndex
    let line = String(decoding: bytes[..<split], as: UTF8.self)
    let input = split < bytes.endIndex ? (try? JSONValue.parse(bytes[(split + 1)...])) ?? .null : .null
    let references = InputReferences.references(in: line).references
    var previous = line.startIndex
    for reference in references {
        let text = line[reference.range]
        guard reference.range.lowerBound >= previous, text.hasPrefix("{{"), text.hasSuffix("}}") else {
            fatalError("the references of \(line.debugDescription) are out of order or no {{…}}: \(references)")
        }
        previous = reference.range.upperBound
    }
    for quoted in [false, true] { checkSubstitution(line, references, input, quoted: quoted) }
    checkEnvironment(input)
    if ShellPlacement.misplaced(in: line).isEmpty, !references.isEmpty { checkPlacement(line, references) }
    return 0
}

/// Each reference of a line the shell-line check let through stands where dash reads plain
/// words: the line is read with every reference as one letter, which the oracle places. The
/// line goes to the oracle as Unicode scalars, as dash reads bytes (a `"` followed by a
/// combining mark is one `Character`, but a quote to dash).
func checkPlacement(_ line: String, _ references: [InputReferences.Reference]) {
    var masked: [Unicode.Scalar] = []
    var marks: [Int] = []
    var position = line.startIndex
    for reference in references {
        masked += line.unicodeScalars[position..<reference.range.lowerBound]
        marks.append(masked.count)
        masked.append("R")
        position = reference.range.upperBound
    }
    masked += line.unicodeScalars[position...]
    guard let places = ShellOracle.places(in: masked) else { return }
    for (reference, mark) in zip(references, marks) where !places[mark].isSafe {
        fatalError("\(line[reference.range]) in \(line.debugDescription) passes the shell-line check, but dash reads it \(places[mark])")
    }
}

/// Substitution gives each reference's value in place (single-quoted for a shell line), or
/// fails when one is missing or holds a NUL.
func checkSubstitution(_ line: String, _ references: [InputReferences.Reference], _ input: JSONValue, quoted: Bool) {
    var expected = ""
    var position = line.startIndex
    var missing = false
    for reference in references {
        expected += line[position..<reference.range.lowerBound]
        guard let value = JSONPointer(tokens: reference.path).resolve(in: input) else { missing = true; break }
        let text = value.stringValue ?? value.serialized()
        if text.utf8.contains(0) { missing = true; break }
        expected += quoted ? "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" : text
        position = reference.range.upperBound
    }
    expected += line[position...]
    switch InputReferences.substitute(line, index: 0, input: input, quoted: quoted) {
    case .success(let result):
        guard !missing, result == expected else { fatalError("\(line.debugDescription) with \(input.serialized()) gave \(result.debugDescription), expected \(missing ? "a failure" : expected.debugDescription)") }
    case .failure(let failure):
        guard missing, !failure.message.isEmpty else { fatalError("\(line.debugDescription) with \(input.serialized()) failed: \(failure.message)") }
    }
}

/// The input's variables: `INPUT_` and a name a shell can read, no NUL, within the limits.
func checkEnvironment(_ input: JSONValue) {
    let (variables, _) = InputEnvironment.variables(for: input)
    var total = 0
    for (name, value) in variables {
        let body = name.dropFirst(InputEnvironment.prefix.count)
        guard name.hasPrefix(InputEnvironment.prefix), let first = body.unicodeScalars.first, !("0"..."9").contains(first),
              body.unicodeScalars.allSatisfy({ $0 == "_" || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }),
              !value.utf8.contains(0), value.utf8.count <= InputEnvironment.largestValue else {
            fatalError("the variable \(name)=\(value.prefix(100).debugDescription) for \(input.serialized().prefix(300))")
        }
        total += name.utf8.count + value.utf8.count + 2
    }
    guard total <= InputEnvironment.largestTotal else { fatalError("\(total) bytes of variables for one input") }
}
