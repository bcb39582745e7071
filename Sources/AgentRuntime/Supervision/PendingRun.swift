/// Emitted frames taken out of an emit ring as one run (offsets in its readable bytes).
struct PendingRun {
    var start = 0
    var end = 0
    var count = 0
}
