import AgentBase
import AgentLoop
import JSONSchema

/// What a large run costs the loop is done on a thread of its own: reading a large input
/// (held as its text, see ``RunInput``) into the value its launch needs for `INPUT_*` and
/// `{{input.…}}` (10–20 ms a MiB), and making a large stdout and stderr into the outcome's
/// output and tails (a MiB of JSON or of text to escape: tens of ms).
extension CommandTaskRunner {
    /// One thread for both (and a workflow step's large input), started at the first.
    nonisolated static var textMaking: BlockingPool { RunInput.textMaking }

    /// Reads `run`'s input into a value on ``textMaking``; the run is launched when it is back
    /// (at once, read here, when the system refuses the pool its thread).
    func readInputAside(_ run: CommandRun) {
        inputReading[run.runID] = run
        let held = run.start.held, inbox = loop.inbox
        let read = LoopOwned({ [weak self] (value: JSONValue) in
            // Cancelled meanwhile, or ended by the stop (which empties `inputReading`).
            guard let self, inputReading[run.runID] === run else { return }
            inputReading[run.runID] = nil
            // Kept beside the text until the command has started (``RunInput/compact()``).
            run.start.held.keep(value)
            begin(run)
        })
        let submitted = Self.textMaking.submit {
            let value = held.value
            inbox.post { read.value(value) }
        }
        if !submitted { read.value(held.value) }
    }

    /// Ends a run whose input is being read (a cancel, a timeout, the stop); false when none is.
    func cancelReading(_ runID: String, reason: TaskRunOutcome.Status) -> Bool {
        guard let run = inputReading.removeValue(forKey: runID) else { return false }
        finishUnstarted(run, "\(Self.endedUnstarted(reason)) before its command started (its input was being read)", status: reason)
        return true
    }

    /// Makes a large run's texts on ``textMaking``; the run is settled when they are back (at
    /// once, made here, when the system refuses the pool its thread).
    func makeTextsAside(_ run: CommandRun, _ captures: CommandCaptures) {
        let inbox = loop.inbox
        let made = LoopOwned({ [weak self, weak run] (texts: CommandCaptures.Texts) in
            // The agent's stop may have made them already (see shutDown()).
            guard let self, let run, let status = run.exitStatus, runs[run.runID] === run else { return }
            ended(run, status: status, texts: texts)
            settle(run)
        })
        let submitted = Self.textMaking.submit {
            let texts = captures.texts()
            inbox.post { made.value(texts) }
        }
        if !submitted { made.value(captures.texts()) }
    }
}
