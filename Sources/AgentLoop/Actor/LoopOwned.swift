/// A value that stays on the loop while work it waits for runs elsewhere: any thread may hold
/// the box (it is `Sendable`), only ``LoopActor`` code may open it. For what the loop hands to
/// another thread and gets back in a post (a command's responder while the store commits), so
/// that the compiler, not a comment, keeps it on the loop.
@LoopActor
package final class LoopOwned<Value> {
    package let value: Value

    package init(_ value: Value) {
        self.value = value
    }
}
