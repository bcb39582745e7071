import AgentCore
import JSONSchema

/// A process the supervisor can run: resolved type, module, settings with defaults, policy.
public struct PlannedProcess: Sendable, Equatable {
    public var name: String
    public var type: String
    public var kind: String
    public var module: ModuleLocation
    /// Settings for the module, defaults applied.
    public var settings: JSONObject
    public var subscriptions: [String]
    public var policy: ProcessPolicy
    /// Periodic queries over the event log (monitors).
    public var queries: [PlannedQuery] = []
    /// Chatbots: module name → library, for the adapters they load.
    public var adapterLibraries: [String: String] = [:]
    /// A replica's: the process's name in the settings (its own name is `<replicaOf>#<replica>`);
    /// nil for a process without `replicas`.
    public var replicaOf: String?
    /// A replica's number, 1…N (0 for a process without `replicas`).
    public var replica = 0

    /// The name in the settings: ``replicaOf`` for a replica, else the name.
    public var configuredName: String { replicaOf ?? name }

    /// The name of replica `index` of process `name`: `name#index`. (`#` is not allowed in a
    /// process name, so that no configured name is ever taken for a replica's.)
    public static func replicaName(_ name: String, _ index: Int) -> String { "\(name)#\(index)" }

    package init(name: String, type: String, kind: String, module: ModuleLocation, settings: JSONObject, subscriptions: [String], policy: ProcessPolicy, queries: [PlannedQuery] = [], adapterLibraries: [String: String] = [:], replicaOf: String? = nil, replica: Int = 0) {
        self.name = name
        self.type = type
        self.kind = kind
        self.module = module
        self.settings = settings
        self.subscriptions = subscriptions
        self.policy = policy
        self.queries = queries
        self.adapterLibraries = adapterLibraries
        self.replicaOf = replicaOf
        self.replica = replica
    }
}
