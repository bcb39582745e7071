import JSONSchema

/// One command of the agent, declared once by the feature it belongs to: its name, routes,
/// request and answer types with their JSON Schemas, and what it needs. The command registry
/// validates a request against `requestSchema` (the same way for every front), decodes it
/// into `Request`, runs the command on its host and encodes its `Answer`.
///
/// The schemas are declared beside the types, not generated: they carry what a Swift type
/// cannot (bounds, descriptions, defaults). `CommandSchemaAgreementTests` proves that each
/// schema and its type agree.
public protocol AgentCommand: Sendable {
    associatedtype Request: Codable & Sendable = NoFields
    associatedtype Answer: Encodable
    /// The object the command runs on (``TaskCoordinator`` for the task commands).
    associatedtype Host

    /// The `command` of the request: `task_run`.
    static var name: String { get }
    /// One line for help and the OpenAPI document.
    static var summary: String { get }
    /// Where the HTTP API serves it.
    static var routes: [CommandRoute] { get }
    /// Changes something: audited, the admin role over HTTP, a CSRF check from a browser.
    static var mutating: Bool { get }
    /// Needs the admin role over HTTP (default: whether it is `mutating`): reads that show
    /// secrets or run a module's code (`settings_get`, `validate`) need it too; a person's action
    /// that changes something (`task_complete`, `workflow_approve`) does not — any role may send
    /// it, and the command checks that it is that person's.
    static var requiresAdmin: Bool { get }
    /// Why the read role may not send it, as its refusal says (default: it changes something).
    static var adminReason: String { get }
    /// A grant that lets a token without the admin role send it (`"grants": ["publish"]` on a
    /// token of the HTTP settings): a program allowed this one change and no other. nil: none.
    static var grant: String? { get }
    /// Answered while the agent stops (reads).
    static var answersWhileStopping: Bool { get }
    /// The request's members as a JSON Schema object.
    static var requestSchema: JSONValue { get }
    /// The schema of a successful answer.
    static var answerSchema: JSONValue { get }
    /// Requests that must validate and decode, with an answer that must match `answerSchema`
    /// (checked by the agreement test).
    static var examples: [(request: JSONValue, answer: Answer)] { get }
    /// The refusal when the agent has no host for it (no tasks are configured).
    static var unavailable: CommandError { get }

    /// Runs the request on the loop; calls `respond` once, now or later.
    ///
    /// Nonisolated here because this protocol sits below the loop's actor (AgentLoop). A
    /// command whose host is isolated to the loop (the work layer's) conforms `@preconcurrency`
    /// with a `@LoopActor` `run`: the registry calls `run` on the loop only, the witness checks
    /// that at run time, and an isolated conformance is ruled out (the protocol is `Sendable`).
    static func run(_ request: Request, on host: Host, caller: CommandCaller,
                    respond: @escaping (Result<Answer, CommandError>) -> Void)
}

extension AgentCommand {
    public static var answersWhileStopping: Bool { !mutating }
    public static var requiresAdmin: Bool { mutating }
    public static var adminReason: String { "it changes something" }
    public static var grant: String? { nil }
    public static var requestSchema: JSONValue { CommandSchema.noFields }
    public static var examples: [(request: JSONValue, answer: Answer)] { [] }
    public static var unavailable: CommandError { .unavailable("this agent does not serve \(name)") }
}

/// The request of a command without members.
public struct NoFields: Codable, Sendable, Equatable {
    public init() {}
}

/// The objects typed commands run on, as the agent provides them (nil: the agent has none,
/// the command answers its ``AgentCommand/unavailable``).
package protocol CommandHosts: AnyObject {
    func host<Host>(_ type: Host.Type) -> Host?
    /// The agent is stopping: only commands that answer while stopping run.
    var isStopping: Bool { get }
}
