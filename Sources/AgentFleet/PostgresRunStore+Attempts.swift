#if Fleet
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// Task runs' attempts in the fleet's database (table `task_attempts`, migration 10): written
/// with their runs' changes, read by `task show`, kept within ``TaskAttempt``'s bounds, deleted
/// with their runs (``PostgresRunStore/prune(endedBefore:keeping:)``).
extension PostgresRunStore {
    package func attempts(of runID: String) async throws -> [TaskAttempt] {
        let rows = try await client.query("""
            SELECT data, stderr_tail, stdout_tail FROM task_attempts WHERE run_id = \(runID) ORDER BY attempt
            """, logger: logger)
        var attempts: [TaskAttempt] = []
        for try await (data, stderr, stdout) in rows.decode((String, String?, String?).self) {
            guard let value = try? JSONValue.parse(data), let attempt = TaskAttempt(stored: value, stderrTail: stderr, stdoutTail: stdout) else { continue }
            attempts.append(attempt)
        }
        return attempts
    }

    /// The attempts' records of a batch as column arrays, for `unnest`: the last change of each
    /// attempt (a run's attempt may end and the next begin in one batch; one statement may not
    /// write a row twice). A missing tail is "" (arrays of optionals are not encoded).
    struct AttemptColumns {
        var runIDs: [String] = [], numbers: [Int32] = [], statuses: [String] = [], records: [String] = []
        var stderrTails: [String] = [], stdoutTails: [String] = []

        static let types: [PostgresDataType] = [.textArray, .int4Array, .textArray, .textArray, .textArray, .textArray]

        init(_ runs: [TaskRun]) {
            var last: [String: Int] = [:]
            for (index, run) in runs.enumerated() {
                guard let record = run.attemptRecord else { continue }
                last["\(record.number) \(run.id)"] = index
            }
            for (index, run) in runs.enumerated() {
                guard let record = run.attemptRecord, last["\(record.number) \(run.id)"] == index,
                      let number = Int32(exactly: record.number) else { continue }
                runIDs.append(run.id)
                numbers.append(number)
                statuses.append(record.status.rawValue)
                records.append(record.storedJSON.serialized())
                stderrTails.append(Self.text(record.stderrTail))
                stdoutTails.append(Self.text(record.stdoutTail))
            }
        }

        /// A tail as a text column takes it: "" for none, NUL (refused by PostgreSQL) as U+FFFD.
        static func text(_ tail: String?) -> String {
            guard let tail else { return "" }
            return tail.utf8.contains(0) ? tail.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : tail
        }

        func bind(_ bindings: inout PostgresBindings) {
            bindings.append(runIDs)
            bindings.append(numbers)
            bindings.append(statuses)
            bindings.append(records)
            bindings.append(stderrTails)
            bindings.append(stdoutTails)
        }
    }

    /// The insert of ``AttemptColumns`` bound from parameter `$first` on, of the rows `condition`
    /// (on `a`) keeps: replaces an attempt written before.
    static func attemptsInsert(from first: Int, where condition: String = "true") -> String {
        let p = (first..<first + 6).map { "$\($0)" }
        return """
            INSERT INTO task_attempts (run_id, attempt, status, data, stderr_tail, stdout_tail)
            SELECT a.run_id, a.attempt, a.status, a.data, NULLIF(a.stderr_tail, ''), NULLIF(a.stdout_tail, '')
            FROM unnest(\(p[0])::text[], \(p[1])::int4[], \(p[2])::text[], \(p[3])::text[], \(p[4])::text[], \(p[5])::text[])
                AS a(run_id, attempt, status, data, stderr_tail, stdout_tail)
            WHERE \(condition)
            ON CONFLICT (run_id, attempt) DO UPDATE SET status = EXCLUDED.status, data = EXCLUDED.data,
                stderr_tail = EXCLUDED.stderr_tail, stdout_tail = EXCLUDED.stdout_tail
            """
    }

    /// Writes attempts' records (of runs written without a claim) in one statement.
    static func writeAttempts(_ attempts: AttemptColumns, on connection: PostgresConnection, logger: Logger) async throws {
        guard !attempts.runIDs.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 6)
        attempts.bind(&bindings)
        try await connection.query(PostgresQuery(unsafeSQL: attemptsInsert(from: 1), binds: bindings), logger: logger)
    }

    /// Keeps the attempts of the batch's runs within their bounds (a statement only for runs past
    /// them): the tails of all but the newest ``TaskAttempt/keptTails`` let go, and all but the
    /// first and the newest ``TaskAttempt/keptAttempts`` - 1 attempts deleted.
    static func trimAttempts(of runs: [TaskRun], on connection: PostgresConnection, logger: Logger) async throws {
        var latest: [String: Int] = [:]
        for run in runs {
            guard let number = run.attemptRecord?.number, number > TaskAttempt.keptTails else { continue }
            latest[run.id] = max(latest[run.id] ?? 0, number)
        }
        guard !latest.isEmpty else { return }
        let ids = Array(latest.keys), tailsUpTo = ids.map { Int32(clamping: latest[$0]! - TaskAttempt.keptTails) }
        try await connection.query("""
            UPDATE task_attempts t SET stderr_tail = NULL, stdout_tail = NULL FROM unnest(\(ids)::text[], \(tailsUpTo)::int4[]) AS c(id, upto)
            WHERE t.run_id = c.id AND t.attempt <= c.upto AND (t.stderr_tail IS NOT NULL OR t.stdout_tail IS NOT NULL)
            """, logger: logger)
        let past = ids.filter { latest[$0]! > TaskAttempt.keptAttempts }
        guard !past.isEmpty else { return }
        let upTo = past.map { Int32(clamping: latest[$0]! - TaskAttempt.keptAttempts + 1) }
        try await connection.query("""
            DELETE FROM task_attempts t USING unnest(\(past)::text[], \(upTo)::int4[]) AS c(id, upto)
            WHERE t.run_id = c.id AND t.attempt > 1 AND t.attempt <= c.upto
            """, logger: logger)
    }
}
#endif
