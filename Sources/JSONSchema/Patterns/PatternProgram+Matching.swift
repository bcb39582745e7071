extension PatternProgram {
    /// Whether the program matches somewhere in `input`, spending at most `budget` steps (each
    /// instruction visited costs one); `.overBudget` when they run out before the answer.
    func matches(_ input: [Unicode.Scalar], budget: inout Int) -> PatternOutcome {
        var run = Run(program: self, input: input)
        let outcome = run.execute(limit: budget)
        budget -= min(run.steps, budget)
        return outcome
    }

    /// The state of one simulation.
    private struct Run {
        let program: [Instruction]
        let sets: [ScalarSet]
        let anchoredStart: Bool
        let input: [Unicode.Scalar]
        /// For each instruction, the position + 1 at which it was last added to a list, so
        /// that each is added at most once per position (this also ends empty loops).
        var marks: [Int]
        var stack: [Int] = []
        var steps = 0

        init(program: PatternProgram, input: [Unicode.Scalar]) {
            self.program = program.instructions
            self.sets = program.sets
            self.anchoredStart = program.anchoredStart
            self.input = input
            marks = Array(repeating: 0, count: program.instructions.count)
        }

        mutating func execute(limit: Int) -> PatternOutcome {
            var current: [Int] = []
            var next: [Int] = []
            for position in 0...input.count {
                if !anchoredStart || position == 0 {
                    if add(0, at: position, into: &current) { return .match }
                }
                guard steps <= limit else { return .overBudget }
                if current.isEmpty && anchoredStart { return .noMatch }
                guard position < input.count else { break }
                let scalar = input[position]
                next.removeAll(keepingCapacity: true)
                for pc in current {
                    steps += 1
                    guard case .set(let index) = program[pc], sets[index].contains(scalar) else { continue }
                    if add(pc + 1, at: position + 1, into: &next) { return .match }
                }
                swap(&current, &next)
                guard steps <= limit else { return .overBudget }
            }
            return .noMatch
        }

        /// Follows `pc` through jumps, splits and assertions that hold at `position`, adding
        /// the instructions that consume a scalar to `list`; returns whether `match` was reached.
        private mutating func add(_ pc: Int, at position: Int, into list: inout [Int]) -> Bool {
            let mark = position + 1
            stack.append(pc)
            while let pc = stack.popLast() {
                guard marks[pc] != mark else { continue }
                marks[pc] = mark
                steps += 1
                switch program[pc] {
                case .set: list.append(pc)
                case .match:
                    stack.removeAll(keepingCapacity: true)
                    return true
                case .jump(let target): stack.append(target)
                case .split(let first, let second):
                    stack.append(second)
                    stack.append(first)
                case .assert(let assertion):
                    if holds(assertion, at: position) { stack.append(pc + 1) }
                }
            }
            return false
        }

        private func holds(_ assertion: PatternAssertion, at position: Int) -> Bool {
            switch assertion {
            case .start: return position == 0
            case .end: return position == input.count
            case .wordBoundary, .notWordBoundary:
                let before = position > 0 && ScalarSet.isWordCharacter(input[position - 1])
                let after = position < input.count && ScalarSet.isWordCharacter(input[position])
                return (before != after) == (assertion == .wordBoundary)
            }
        }
    }
}
