import AgentBase
import JSONSchema

/// The bound on a run's input (and output) as JSON text, checked wherever a run is made: where
/// a front asks for one (`task_run`, `workflow_run`: before the request reaches the loop), at an
/// event's trigger, a workflow step, a schedule's settings, a rerun, a run's completion. The
/// loop writes a new run's record whole to the run journal and hands a command its input on
/// stdin: a 60 MB input, which an HTTP API with a raised `max_body_bytes` accepted, held it 1.3 s.
public enum InputSize {
    /// 1 MiB: what the control socket takes as a whole request, and the HTTP API's default body.
    public static let largest = 1 << 20

    /// Why `input` may not be a run's input (too large, at `/input`), or nil. Reads no more
    /// of the input than the bound.
    public static func problem(_ input: JSONValue?, what: String = "input", pointer: String = "/input") -> CommandError? {
        guard let input, input.serializedLength(atMost: largest) == nil else { return nil }
        return CommandError(.tooLarge, "the \(what) is more than \(largest) bytes of JSON (1 MiB), the most a run's \(what) may have: "
                            + "pass a file's path or a URL to the data instead", pointer: pointer)
    }

    /// Why an event with `payloadBytes` of payload cannot start a run — its input, the event
    /// as `{"type", "source", "time", "payload"}`, would pass the bound — or nil. Measured by
    /// the payload's bytes, known where the event is routed: nothing is walked.
    public static func eventProblem(type: String, source: String, payloadBytes: Int) -> String? {
        guard payloadBytes + type.utf8.count + source.utf8.count + 80 > largest else { return nil }
        return "its payload is \(payloadBytes) bytes of JSON, and a run's input (the event) is at most \(largest) bytes (1 MiB); "
            + "publish a reference to the data (a path, a URL) instead"
    }
}
