import AgentCore
import AgentLoop
import AgentSupervision

/// What the events of a run to their source's one subscriber share, looked up once for
/// all of them rather than for each: the common case of `route` (one subscriber that takes
/// deliveries; nothing to show, store or publish) for the type the source emitted last,
/// which `route` looked up. Each read of a process's property here costs a dynamic
/// exclusivity check (they are `package`, the supervisor in another module), dearer than
/// the rest of an event's way through a run.
struct RunWindow {
    /// The byte count of the type the source emitted last.
    let typeCount: Int
    /// The bytes left in the subscriber's queue for the run's entries (its header deducted).
    let room: Int
    /// The most entry bytes of one run: an eighth of the subscriber's queue (and
    /// `runEntriesLimit`), so that dropping the oldest events still keeps most of a full queue.
    let runLimit: Int

    /// Whether an `event` frame can join the run, and if so the most entry bytes of that
    /// run. The frame is checked as far as a receiver of the run reads it.
    @inline(__always) @LoopActor
    func limit(_ body: UnsafeRawBufferPointer, of source: SupervisedProcess, runBytes: Int, frameBytes: Int) -> Int? {
        guard body.count >= 2 else { return nil }
        let typeLength = Int(FrameCodec.readUInt16(body, at: 0))
        guard typeLength == typeCount, typeLength > 0, body.count >= 2 + typeLength + 8, runBytes + frameBytes <= room,
              source.lastEmittedType.holds(UnsafeRawBufferPointer(rebasing: body[2..<(2 + typeLength)])) else { return nil }
        return runLimit
    }
}
