import AgentBase
import AgentOutputs
import AgentStore

/// Who besides an event's subscribers sees it, as routing asks per event: one flag read
/// instead of three (the console, the outputs, the store).
struct EventTaps {
    /// Whether routing shows or publishes each event (the console with events shown, outputs
    /// that want events): its events cannot go as runs then. The store takes runs whole.
    private(set) var eachEvent = false
    /// Whether routing hands events to more than their subscribers (console, store, outputs).
    private(set) var any = false

    init() {}

    init(console: ConsoleOutput, outputs: OutputHub?, store: AgentStore?) {
        eachEvent = console.showEvents || outputs?.wants(.event) == true
        any = eachEvent || store != nil
    }
}
