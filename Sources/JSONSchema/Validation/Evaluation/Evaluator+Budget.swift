import Foundation

/// What checking one value may cost. A schema that applies two subschemas to the same member
/// at each level of nesting (`allOf` of two parts that both describe `children`) doubles its
/// work with each level: 18 levels of a 1 KB value cost 2^18 evaluations, seconds of CPU and,
/// with an error at each leaf, hundreds of megabytes of errors. The evaluations are bounded by
/// the value's size, as the pattern matches are by ``PatternBudget``.
extension Evaluator {
    /// Evaluations any validation may make, whatever the value's size (a few milliseconds).
    static let evaluationsBeforeSizing = 100_000
    /// Evaluations allowed per value (member, item, scalar) of the instance beyond that: a
    /// schema a value passes in a single pass costs a few per value.
    static let evaluationsPerValue = 16

    /// Errors one evaluation keeps at most (a schema that doubles its work per level doubles
    /// its errors too: 2^18 copies of one error were 137 MB of answer).
    static let mostErrors = 1_000

    /// Whether another error may be kept: past ``mostErrors`` they are noted (``errorsCut``), not built.
    mutating func hasRoomForAnError() -> Bool {
        if errors.count < Self.mostErrors { return true }
        errorsCut = true
        return false
    }

    /// Whether the evaluations have run out: the first time past ``evaluationsBeforeSizing``
    /// the limit is raised for the instance's size; past that, the validation fails.
    mutating func overEvaluationBudget() -> Bool {
        if let instance = unsizedInstance {
            unsizedInstance = nil
            evaluationLimit = max(evaluationLimit, Self.evaluationsPerValue * instance.valueCount)
            if evaluations <= evaluationLimit { return false }
        }
        if evaluationOverrun == nil {
            var overrun = ValidationError(instanceLocation: "", keywordLocation: "", keyword: "$schema", message: Self.evaluationOverrunMessage(evaluationLimit))
            overrun.isUndecided = true
            evaluationOverrun = overrun
        }
        return true
    }

    static func evaluationOverrunMessage(_ limit: Int) -> String {
        "the value could not be checked: checking it costs more than \(limit) evaluations of subschemas (the bound for a value of its "
            + "size); a schema that applies several subschemas to the same members at each level of nesting (an allOf or oneOf whose "
            + "parts each describe the children) doubles the cost with each level: let one subschema describe each member, or send a "
            + "value less deeply nested"
    }
}

extension JSONValue {
    /// How many values this one holds, itself included (members and items at every depth).
    var valueCount: Int {
        var count = 0
        var pending: [JSONValue] = [self]
        while let value = pending.popLast() {
            count += 1
            switch value {
            case .array(let items): pending.append(contentsOf: items)
            case .object(let object): pending.append(contentsOf: object.values)
            default: break
            }
        }
        return count
    }
}
