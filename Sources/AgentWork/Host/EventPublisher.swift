import AgentCore
import AgentSupervision

/// What the parts the supervisor owns (``WorkHost``, ``FleetBridge``, ``MemoryService``, the
/// root's chat and queries) need of routing: hand it an event the agent made, queue an event or
/// a reply for one worker, and look up who subscribes. The supervisor conforms; none of those
/// parts holds the supervisor itself.
///
/// Loop thread only. What is queued is written at the end of the loop turn.
package protocol EventPublisher: AnyObject {
    /// Shows, stores and hands to the outputs an event made by the agent itself (`tasks`,
    /// `schedules`, `workflow:NAME`) or read from the fleet, and queues it for its subscribers
    /// (one replica of each group), whatever their queues hold. Triggers and the fleet are the
    /// caller's.
    func publish(type: String, source: String, payload: [UInt8], timeNanoseconds: Int64)
    /// As ``publish(type:source:payload:timeNanoseconds:)``, for an event already committed to
    /// the store (a published one): it is not handed to the store again.
    func publishStored(type: String, source: String, payload: [UInt8], timeNanoseconds: Int64)
    /// Queues an event made by the agent for `process` alone (never dropped for a full queue).
    func deliver(type: String, source: String, payload: [UInt8], to process: SupervisedProcess)
    /// Queues a control frame (a reply to a worker's request) for `process`'s worker.
    func send(_ kind: FrameKind, body: [UInt8], to process: SupervisedProcess)
    /// The event types subscribed to as `prefix` + type, without the prefix, sorted.
    func subscribedTypes(prefix: String) -> [String]
    /// The processes that take deliveries of any of `types` (those of every type and replicas
    /// included; a stopped or failed one is not among them).
    func deliveryTargets(of types: [String]) -> [SupervisedProcess]
    /// Triggers or the published types changed: every source looks its targets up again.
    func routingChanged()
}
