/// What an output does with its records. A sink runs only on its channel's thread, so it
/// may block, and it needs no locking of its own.
package protocol OutputSink: AnyObject {
    /// The most records handed to `deliver` at once.
    var batchLimit: Int { get }
    /// Seconds the oldest queued record may wait for a batch to fill before it is delivered
    /// anyway (0: deliver whatever is queued at once).
    var linger: Double { get }

    /// Delivers `batch` (or gives up on it), reporting deliveries, failures and drops to
    /// `channel`.
    func deliver(_ batch: [OutputRecord], channel: OutputChannel)

    /// Writes out anything buffered: called when the queue runs empty and before `close`.
    func flush(channel: OutputChannel)

    /// Releases the sink's resources; called once, last.
    func close(channel: OutputChannel)
}
