/// A pattern compiled to a Thompson NFA and matched by simulating every state at once (Pike's
/// method, without captures): the cost is at most a few steps per instruction per input scalar,
/// whatever the pattern, so `(x+x+)+y` or `^(a+)+$` cannot backtrack exponentially.
///
/// Bounded repetition is expanded (`a{3,5}` is `aaa` then two optional `a`), so the program's
/// size is capped: a pattern whose program would exceed `maxInstructions` is not compiled here
/// (`PatternRegex` then uses ICU with a step budget).
struct PatternProgram: Sendable {
    /// The most instructions a program may have: enough for e.g. `^[a-z0-9]{1,255}$` several
    /// times over, small enough that one input scalar costs at most ~20,000 steps.
    static let maxInstructions = 10_000

    /// The program would exceed `maxInstructions`.
    struct TooLarge: Error {}

    enum Instruction: Sendable {
        /// Consume one scalar in `sets[index]`.
        case set(Int)
        /// Continue at both targets.
        case split(Int, Int)
        /// Continue at the target.
        case jump(Int)
        /// Continue at the next instruction when the assertion holds.
        case assert(PatternAssertion)
        /// The pattern matched.
        case match
    }

    private(set) var instructions: [Instruction] = []
    /// The sets of `.set` instructions (kept apart so that instructions stay small).
    private(set) var sets: [ScalarSet] = []
    /// Whether every match must start at the start of the input (the pattern starts with `^`).
    private(set) var anchoredStart = false

    /// Compiles `node`; throws `TooLarge` once the program passes `maxInstructions`.
    init(_ node: PatternNode) throws(TooLarge) {
        try emit(node)
        instructions.append(.match)
        if case .assert(.start) = instructions.first { anchoredStart = true }
    }

    // MARK: - Compilation

    private mutating func append(_ instruction: Instruction) throws(TooLarge) {
        guard instructions.count < PatternProgram.maxInstructions else { throw TooLarge() }
        instructions.append(instruction)
    }

    private mutating func emit(_ node: PatternNode) throws(TooLarge) {
        switch node {
        case .set(let set):
            try append(.set(sets.count))
            sets.append(set)
        case .assertion(let assertion):
            try append(.assert(assertion))
        case .sequence(let nodes):
            for child in nodes { try emit(child) }
        case .alternation(let nodes):
            try emitAlternation(nodes)
        case .repetition(let child, let min, let max):
            try emitRepetition(child, min, max)
        }
    }

    /// `split L1, next; L1: a; jump end; next: split L2, next'; …; last alternative; end:`
    private mutating func emitAlternation(_ nodes: [PatternNode]) throws(TooLarge) {
        var jumps: [Int] = []
        for (index, child) in nodes.enumerated() {
            if index == nodes.count - 1 {
                try emit(child)
            } else {
                let split = instructions.count
                try append(.split(split + 1, 0))
                try emit(child)
                jumps.append(instructions.count)
                try append(.jump(0))
                instructions[split] = .split(split + 1, instructions.count)
            }
        }
        for jump in jumps { instructions[jump] = .jump(instructions.count) }
    }

    private mutating func emitRepetition(_ child: PatternNode, _ min: Int, _ max: Int?) throws(TooLarge) {
        if min > 0 {
            let start = instructions.count
            try emit(child)
            // Repeating what matches only the empty string (e.g. `(){99999}`) adds nothing.
            if instructions.count == start { return }
            for _ in 1..<min { try emit(child) }
        }
        guard let max else {
            // loop: split body, exit; body; jump loop; exit:
            let loop = instructions.count
            try append(.split(loop + 1, 0))
            try emit(child)
            try append(.jump(loop))
            instructions[loop] = .split(loop + 1, instructions.count)
            return
        }
        // Each optional copy: split body, end; body — all exits go to the common end.
        var splits: [Int] = []
        for _ in min..<Swift.max(min, max) {
            splits.append(instructions.count)
            try append(.split(instructions.count + 1, 0))
            try emit(child)
        }
        for split in splits { instructions[split] = .split(split + 1, instructions.count) }
    }
}
