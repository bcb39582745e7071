/// The time one drain of a worker's frames may take in a loop turn. A byte budget alone does
/// not bound a turn: a flood of tiny frames (a 20-byte event, a short message) fits tens of
/// thousands into a megabyte, and each costs routing, printing or storing. A drain that has
/// spent its slice stops and goes on at the next turn, after the others' work.
package struct DrainSlice {
    /// Frames handled between two looks at the clock (a look costs a vDSO call).
    package static let framesPerLook = 64
    private let deadline: Double
    private var frames = 0
    /// Whether a look found the slice spent.
    package private(set) var isSpent = false

    /// A slice of `seconds` from now; `.infinity` never ends (a dead worker's last words).
    package init(seconds: Double) {
        deadline = seconds.isFinite ? EventLoop.now() + seconds : .infinity
    }

    /// Counts one frame about to be handled; true once the slice is spent. The first
    /// `framesPerLook - 1` frames of a drain are always handled, so every drain makes progress.
    @inline(__always)
    package mutating func spend() -> Bool {
        if isSpent { return true }
        frames &+= 1
        guard frames % Self.framesPerLook == 0 else { return false }
        isSpent = EventLoop.now() >= deadline
        return isSpent
    }
}
