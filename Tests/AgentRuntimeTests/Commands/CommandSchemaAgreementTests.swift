@testable import AgentBase
@testable import AgentCommands
import AgentTestSupport
import AgentWork
import JSONSchema
import Testing

/// For every typed command, the declared JSON Schema and the Swift types agree: the same
/// members, required the same, of the same types and enums; each declared example request
/// validates, decodes and validates again once encoded; each example answer validates.
@Suite(.ownThreads) struct CommandSchemaAgreementTests {
    static var typed: [any AgentCommand.Type] { TypedCommands.all }

    @Test(arguments: typed.map { ObjectIdentifier($0) })
    func theRequestSchemaAndTheRequestTypeAgree(_ id: ObjectIdentifier) throws {
        let command = try #require(Self.typed.first { ObjectIdentifier($0) == id })
        try Self.checkRequest(command)
    }

    @Test(arguments: typed.map { ObjectIdentifier($0) })
    func theExamplesValidateDecodeAndEncode(_ id: ObjectIdentifier) throws {
        let command = try #require(Self.typed.first { ObjectIdentifier($0) == id })
        try Self.checkExamples(command)
    }

    @Test(arguments: typed.map { ObjectIdentifier($0) })
    func theAnswerSchemaAndTheAnswerTypeAgree(_ id: ObjectIdentifier) throws {
        let command = try #require(Self.typed.first { ObjectIdentifier($0) == id })
        try Self.checkAnswer(command)
    }

    /// Only the answers a host serialises once on a hot path (a snapshot's `status` and
    /// `metrics`, shared by every request of a batch) come as JSON it made (``EncodedAnswer``).
    @Test func onlyTheSnapshotsAnswersComeAsJSONTheirHostMade() throws {
        var opaque: [String] = []
        for command in Self.typed {
            if try Self.isOpaque(command) { opaque.append(command.name) }
        }
        #expect(Set(opaque) == Self.encodedAnswers, "\(opaque.sorted())")
    }

    static let encodedAnswers: Set = ["status", "metrics"]

    @Test func namesAreUniqueAndEveryPathParameterIsARequestMember() throws {
        let registry = CommandRegistry.standard
        #expect(Set(registry.names).count == registry.names.count)
        var routes = Set<String>()
        for command in registry.commands {
            let properties = command.requestSchema["properties"]?.objectValue ?? [:]
            for declaration in command.declarations {
                #expect(routes.insert(declaration.method + " " + declaration.path).inserted, "\(declaration.method) \(declaration.path) twice")
                for parameter in declaration.pathParameters {
                    #expect(properties[parameter] != nil, "\(command.name): {\(parameter)} is not a member of its request")
                }
            }
        }
    }

    static func checkRequest<C: AgentCommand>(_ command: C.Type) throws {
        let schema = C.requestSchema
        let properties = schema["properties"]?.objectValue ?? [:]
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let members = SchemaProbe.members(of: C.Request.self)
        #expect(Set(members.keys) == Set(properties.keys), "\(C.name): the type decodes \(members.keys.sorted()), the schema declares \(properties.keys.sorted())")
        #expect(Set(members.filter(\.value.required).keys) == required, "\(C.name): required members differ")
        #expect(schema["additionalProperties"] == false, "\(C.name): the request schema must refuse unknown members")
        for (key, member) in members {
            guard let declared = properties[key] else { continue }
            if let types = member.types {
                #expect(declared["type"] == types, "\(C.name).\(key): the type takes \(types), the schema says \(declared["type"] ?? .null)")
            } else if let values = member.values {
                let declaredValues = declared["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
                #expect(Set(values) == Set(declaredValues), "\(C.name).\(key): the enum has \(values), the schema \(declaredValues)")
            } else if let type = member.type {
                #expect(declared["type"]?.stringValue == type, "\(C.name).\(key): the type is \(type), the schema says \(declared["type"] ?? .null)")
            } else {
                #expect(declared["type"] == nil && declared["enum"] == nil, "\(C.name).\(key): any JSON value in Swift, constrained in the schema")
            }
        }
    }

    static func isOpaque<C: AgentCommand>(_ command: C.Type) throws -> Bool {
        try C.examples.contains { try AnswerProbe.members(of: $0.answer) == nil }
    }

    /// The members the answer type writes over the examples are the schema's; the required
    /// ones it writes in every example, whatever it holds; their JSON types agree.
    static func checkAnswer<C: AgentCommand>(_ command: C.Type) throws {
        let probes = try C.examples.map { try AnswerProbe.members(of: $0.answer) }
        guard !probes.isEmpty, !probes.contains(where: { $0 == nil }) else { return }
        let schema = C.answerSchema
        let properties = schema["properties"]?.objectValue ?? [:]
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        var written: [String: AnswerProbe.Member] = [:]
        var always = Set(probes[0]!.keys)
        for members in probes.compactMap({ $0 }) {
            written.merge(members) { first, _ in first }
            always.formIntersection(members.filter(\.value.always).keys)
        }
        #expect(Set(written.keys) == Set(properties.keys), "\(C.name): the answer writes \(written.keys.sorted()), the schema declares \(properties.keys.sorted())")
        #expect(required.isSubset(of: always), "\(C.name): the schema requires \(required.sorted()), the answer always writes \(always.sorted())")
        for (key, member) in written {
            guard let type = member.type, let declared = properties[key]?["type"]?.stringValue else { continue }
            #expect(declared == type || (declared == "number" && type == "integer"), "\(C.name).\(key): the answer writes \(type), the schema says \(declared)")
        }
    }

    static func checkExamples<C: AgentCommand>(_ command: C.Type) throws {
        let registered = try #require(CommandRegistry.standard.command(named: C.name))
        let answerValidator = try JSONSchemaValidator(schema: C.answerSchema)
        #expect(!C.examples.isEmpty, "\(C.name) declares no example")
        for (request, answer) in C.examples {
            let fields = try #require(request.objectValue)
            #expect(registered.problem(in: fields) == nil, "\(C.name): the example \(request) does not validate")
            let decoded = try JSONValueDecoder().decode(C.Request.self, from: request)
            let encoded = try #require(try JSONValueEncoder().encode(decoded).objectValue)
            #expect(registered.problem(in: encoded) == nil, "\(C.name): \(request) encoded again is \(encoded), which does not validate")
            let answered = try JSONValueEncoder().encode(answer)
            #expect(answerValidator.validate(answered).isEmpty, "\(C.name): the example answer \(answered) does not match the answer schema: \(answerValidator.validate(answered))")
        }
    }
}
