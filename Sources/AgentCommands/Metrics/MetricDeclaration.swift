/// One metric family the agent exposes (`GET /metrics`, the `metrics` command): its name,
/// type, help and the labels its samples may carry. The families are declared once
/// (MetricDeclaration+Catalog.swift); the snapshot's samples and docs/reference/metrics.md are
/// made from the declarations, so the reference cannot name a family or label the agent does
/// not have.
public struct MetricDeclaration: Sendable {
    /// A label: its name and what its values are.
    public struct Label: Sendable {
        public var name: String
        public var values: String

        public init(_ name: String, _ values: String) {
            self.name = name
            self.values = values
        }
    }

    public var name: String
    public var kind: AgentSnapshot.MetricFamily.Kind
    public var help: String
    public var labels: [Label]
    /// When the family is there at all (nil: always).
    public var presence: String?

    public init(_ name: String, _ kind: AgentSnapshot.MetricFamily.Kind, _ help: String, labels: [Label] = [], presence: String? = nil) {
        self.name = name
        self.kind = kind
        self.help = help
        self.labels = labels
        self.presence = presence
    }
}
