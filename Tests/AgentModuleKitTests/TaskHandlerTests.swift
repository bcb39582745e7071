import AgentModuleABI
import AgentTestSupport
import Foundation
import Testing
@testable import AgentModuleKit

/// The SDK's side of task handlers: what the manifest says of one and how a run's input is
/// decoded. (Runs themselves, their cancellation and their completion through the host are
/// tested with real executor workers in ModuleTaskRunnerTests: a handler's task needs the
/// cooperative pool, which this test process shares with tests that block it.)
@Suite(.ownThreads) struct TaskHandlerTests {
    struct Greeter: TaskHandler {
        struct Settings: Decodable, Sendable { var greeting: String }
        struct Input: Decodable, Sendable {
            var name: String
            var times: Int
        }
        struct Output: Encodable, Sendable { var text: String }

        static let typeName = "greet"
        static let description = "Greets someone."
        static var settingsSchema: Schema { .object(["greeting": .string(default: "Hello")]) }
        static var inputSchema: Schema {
            .object(["name": .string(minLength: 1), "times": .integer(minimum: 1, default: 1)], required: ["name"])
        }
        static var outputSchema: Schema? { .object(["text": .string()]) }
        static var heartbeatTimeout: Double? { 30 }

        let settings: Settings
        init(settings: Settings) { self.settings = settings }

        func run(input: Input, context: TaskContext) async throws -> Output {
            Output(text: "\(settings.greeting), \(input.name)")
        }
    }

    /// A handler that declares only what it must.
    struct Minimal: TaskHandler {
        struct Input: Decodable, Sendable {}
        struct Output: Encodable, Sendable {}
        static let typeName = "minimal"
        static let description = "Does nothing."
        static var inputSchema: Schema { .object([:]) }
        init(settings: NoSettings) {}
        func run(input: Input, context: TaskContext) async throws -> Output { Output() }
    }

    /// A handler whose settings and input are declared once, with ``Setting``s.
    struct Declared: TaskHandler {
        struct Settings: SettingsDeclaration {
            @Setting(minLength: 1, description: "The greeting.")
            var greeting = "Hello"
        }
        struct Input: SettingsDeclaration {
            @Setting(minLength: 1, description: "Who to greet.")
            var name: String
            @Setting(minimum: 1, maximum: 10)
            var times = 1
        }
        struct Output: Encodable, Sendable { var text: String }
        static let typeName = "declared"
        static let description = "Greets someone, declared once."
        let settings: Settings
        init(settings: Settings) { self.settings = settings }
        func run(input: Input, context: TaskContext) async throws -> Output {
            Output(text: Array(repeating: "\(settings.greeting), \(input.name)", count: input.times).joined(separator: " "))
        }
    }

    private func manifest(_ entry: TaskEntry) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(entry.manifestJSON().serialized().utf8)) as? [String: Any])
    }

    private func input(_ json: String) throws -> Greeter.Input {
        try TaskEntry.input(Greeter.self, from: Array(json.utf8), schema: Greeter.inputSchema)
    }

    @Test func theManifestDeclaresATaskWithItsSchemasAndHeartbeatTimeout() throws {
        let object = try manifest(TaskEntry(Greeter.self))
        #expect(object["kind"] as? String == "task")
        #expect(object["type"] as? String == "greet")
        #expect(object["heartbeat_timeout"] as? Double == 30)
        let input = try #require(object["input_schema"] as? [String: Any])
        #expect(input["required"] as? [String] == ["name"])
        #expect((object["output_schema"] as? [String: Any])?["type"] as? String == "object")
        #expect((object["settings_schema"] as? [String: Any])?["type"] as? String == "object")
        // Optional declarations stay out of the manifest when not made.
        let minimal = try manifest(TaskEntry(Minimal.self))
        #expect(minimal["output_schema"] == nil && minimal["heartbeat_timeout"] == nil)
        #expect((minimal["settings_schema"] as? [String: Any])?["additionalProperties"] as? Bool == false)
    }

    @Test func anInputIsDecodedWithTheSchemasDefaultsFilledIn() throws {
        let decoded = try input(#"{"name": "Ada"}"#)
        #expect(decoded.name == "Ada")
        #expect(decoded.times == 1)
    }

    @Test func anInputThatDoesNotDecodeIsAnErrorNamingTheField() throws {
        let mistyped = #expect(throws: TaskInputError.self) { try input(#"{"name": "Ada", "times": "twice"}"#) }
        #expect(mistyped?.description.hasPrefix("the input does not fit field /times: expected an integer") == true, "\(String(describing: mistyped))")
        let missing = #expect(throws: TaskInputError.self) { try input(#"{"times": 2}"#) }
        #expect(missing?.description == #"the input does not fit field /name: missing required field "name""#, "\(String(describing: missing))")
        let notJSON = #expect(throws: TaskInputError.self) { try input("{") }
        #expect(notJSON?.description.contains("not valid JSON") == true)
    }

    @Test func settingsAndInputDeclaredWithSettingsGiveTheManifestsSchemasAndDecode() throws {
        let object = try manifest(TaskEntry(Declared.self))
        let input = try #require(object["input_schema"] as? [String: Any])
        #expect(input["required"] as? [String] == ["name"])
        let properties = try #require(input["properties"] as? [String: [String: Any]])
        #expect(properties["name"]?["minLength"] as? Int == 1)
        #expect(properties["times"]?["maximum"] as? Int == 10)
        #expect(properties["times"]?["default"] as? Int == 1)
        let settings = try #require(object["settings_schema"] as? [String: Any])
        let settingProperties = try #require(settings["properties"] as? [String: [String: Any]])
        #expect(settingProperties["greeting"]?["default"] as? String == "Hello")
        let decoded = try TaskEntry.input(Declared.self, from: Array(#"{"name": "Ada"}"#.utf8), schema: Declared.inputSchema)
        #expect(decoded.name == "Ada")
        #expect(decoded.times == 1)
    }

    @Test func anInputWithoutDeclaredDefaultsDecodesDirectlyWithTheSameErrors() throws {
        struct Plain: Decodable, Sendable { var name: String; var count: Int? }
        let schema = Schema.object(["name": .string(), "count": .integer()], required: ["name"])
        #expect(!schema.declaresPropertyDefaults)
        #expect(Schema.object(["inner": .object(["n": .integer(default: 1)])]).declaresPropertyDefaults)
        let value = try SettingsDecoding.decode(Plain.self, from: Array(#"{"name": "x", "count": 2}"#.utf8), schema: schema)
        #expect(value.name == "x" && value.count == 2)
        #expect(throws: SettingsError.self) { try SettingsDecoding.decode(Plain.self, from: Array("{nope".utf8), schema: schema) }
        do {
            _ = try SettingsDecoding.decode(Plain.self, from: Array("{nope".utf8), schema: schema)
        } catch let error as SettingsError {
            #expect(error.message == "settings are not valid JSON")
        }
        do {
            _ = try SettingsDecoding.decode(Plain.self, from: Array(#"{"name": 5}"#.utf8), schema: schema)
            Issue.record("a number where a string is expected decoded")
        } catch let error as SettingsError {
            #expect(error.pointer == "/name")
            #expect(error.message.hasPrefix("expected a string"))
        }
    }

    /// The host may cancel a run (from its reader thread) while another thread is starting it,
    /// before the run's Task is registered: the cancel is kept and reaches the Task when it is.
    /// A run that ended before it was registered is not kept, and a cancel then finds nothing.
    @Test func aCancelThatComesBeforeTheRunsTaskIsRegisteredReachesIt() {
        let api = UnsafeMutablePointer<agent_host_api>.allocate(capacity: 1)
        api.initialize(to: agent_host_api())
        defer { api.deallocate() }
        let instance = TaskInstance(prepare: { _ in { _ in [] } }, host: HostBridge(api))
        let early = Task<Void, Never> {}
        instance.cancel(5)
        instance.register(early, token: 5)
        #expect(early.isCancelled)

        let ended = Task<Void, Never> {}
        instance.ended(6)
        instance.register(ended, token: 6)
        instance.cancel(6)
        #expect(!ended.isCancelled, "a run that ended is not cancelled afterwards")

        let going = Task<Void, Never> {}
        instance.register(going, token: 7)
        #expect(!going.isCancelled)
        instance.cancel(7)
        #expect(going.isCancelled)
    }

    /// A prepared run waits at its gate until the host starts it (true) or cancels it (false),
    /// whichever comes first, and whether that comes before the run's Task reaches the gate
    /// or while it waits there; a start for a run no longer prepared is passed over.
    @Test func aPreparedRunsGateOpensOnItsStartAndClosesOnItsCancelWhicheverComesFirst() async {
        let api = UnsafeMutablePointer<agent_host_api>.allocate(capacity: 1)
        api.initialize(to: agent_host_api())
        defer { api.deallocate() }
        let instance = TaskInstance(prepare: { _ in { _ in [] } }, host: HostBridge(api))
        func start(_ tokens: [UInt64]) { tokens.withUnsafeBufferPointer { instance.start($0) } }

        // Decided before the Task reaches the gate.
        instance.prepared(1)
        instance.prepared(2)
        start([1])
        instance.cancel(2)
        #expect(await instance.gate(1) == true)
        #expect(await instance.gate(2) == false)

        // Decided while the Task waits at the gate.
        instance.prepared(3)
        instance.prepared(4)
        async let three = instance.gate(3)
        async let four = instance.gate(4)
        while !(instance.isWaiting(3) && instance.isWaiting(4)) { await Task.yield() }
        start([3, 9])
        instance.cancel(4)
        #expect(await three == true)
        #expect(await four == false)

        // A start after the cancel changes nothing; the gate is gone once passed.
        instance.prepared(5)
        instance.cancel(5)
        start([5])
        #expect(await instance.gate(5) == false)
        #expect(!instance.isWaiting(5))
    }
}
