import AgentBase
import JSONSchema

/// The bound on a run's input as JSON text, checked where a front asks for a run (`task_run`,
/// `workflow_run`), before the request reaches the loop. The loop writes a new run's record
/// whole to the run journal and hands a command its input on stdin: a 60 MB input, which an
/// HTTP API with a raised `max_body_bytes` accepted, held it 1.3 s.
public enum InputSize {
    /// 1 MiB: what the control socket takes as a whole request, and the HTTP API's default body.
    public static let largest = 1 << 20

    /// Why `input` may not be a run's input (too large, at `/input`), or nil. Reads no more
    /// of the input than the bound.
    public static func problem(_ input: JSONValue?) -> CommandError? {
        guard let input, input.serializedLength(atMost: largest) == nil else { return nil }
        return CommandError(.tooLarge, "the input is more than \(largest) bytes of JSON (1 MiB), the most a run's input may have: "
                            + "pass a file's path or a URL to the data instead", pointer: "/input")
    }
}
