import AgentWork
import GRDB

/// Task runs with what the run journal holds of them past the store's mark: the changes the
/// store could not write (a full disk), newer than its records, as the next open writes them.
/// Read beside a stopped agent (``StoreReader``), and by the running agent while its store
/// cannot write (a run that ended then, which memory let go of, was shown as the store had it:
/// still running).
extension SQLiteRunStore {
    /// The runs `filter` picks, newest first: the journal's (newest line first) before the
    /// store's, each run once, with its journaled record.
    package static func list(_ filter: RunFilter, reader: DatabaseQueue, journal: String) throws -> RunListPage<TaskRun> {
        let unwritten = try RunJournal.unwritten(path: journal, reader: reader)
        let newer = Set(unwritten.map(\.id))
        let journaled = unwritten.reversed().filter(filter.matches)
        let listed = try list(filter, reader: reader)
        let stored = listed.runs.filter { !newer.contains($0.run.id) }
        return RunListPage(Array((journaled.map { ListedRun($0) } + stored).prefix(max(filter.limit, 0))), cut: listed.cut)
    }

    /// One run: its journaled record, else the store's.
    package static func readRun(id: String, reader: DatabaseQueue, journal: String) throws -> TaskRun? {
        try RunJournal.unwritten(path: journal, reader: reader).first { $0.id == id } ?? readRun(id: id, reader: reader)
    }

    /// The attempts of one run, with the records the journal holds (their ends on a full disk).
    package static func readAttempts(of runID: String, reader: DatabaseQueue, journal: String) throws -> [TaskAttempt] {
        let journaled = try RunJournal.unwrittenAttempts(of: runID, path: journal, reader: reader)
        let numbers = Set(journaled.map(\.number))
        return (try readAttempts(of: runID, reader: reader).filter { !numbers.contains($0.number) } + journaled)
            .sorted { $0.number < $1.number }
    }

    /// The journal's path while the store cannot write (nil while it writes: then every change
    /// handed to it is written, or waits to be within the commit interval).
    var journalWhileUnwritten: String? { store.writesNow ? nil : store.runJournal.path }
}
