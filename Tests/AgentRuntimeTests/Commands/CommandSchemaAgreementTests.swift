@testable import AgentBase
@testable import AgentCommands
import AgentWork
import JSONSchema
import Testing

/// For every typed command, the declared JSON Schema and the Swift types agree: the same
/// members, required the same, of the same types and enums; each declared example request
/// validates, decodes and validates again once encoded; each example answer validates.
@Suite struct CommandSchemaAgreementTests {
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
        let members = try SchemaProbe.members(of: C.Request.self)
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
