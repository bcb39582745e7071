import AgentBase
import AgentCommands
import JSONSchema

/// The chatbot's `llm` logic adapter's settings, checked where the settings are: their schema,
/// a key only from the environment, and tools that are the agent's commands.
enum LanguageModelAdapterSettings {
    /// The adapter's keys (besides `type`).
    static let schema: JSONValue = [
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "base_url", "model"],
        "properties": [
            "type": ["const": "llm"],
            "name": ["type": "string", "minLength": 1, "maxLength": 64, "description": "The adapter's name in answers (default: llm)."],
            "base_url": ["type": "string", "pattern": "^http://[^\\s]+$",
                         "description": "The server's OpenAI-compatible API (POST {base_url}/chat/completions), http:// only: llama.cpp's server (http://127.0.0.1:8080/v1), Ollama (http://127.0.0.1:11434/v1), vLLM."],
            "model": ["type": "string", "minLength": 1, "description": "The model's name as the server knows it."],
            "api_key": ["type": "string", "description": "Sent as a bearer token; only as ${env:NAME}."],
            "timeout": ["type": "number", "exclusiveMinimum": 0, "maximum": 28, "default": 20, "description": "Seconds for one request to the model (a message's whole answer has 28 s)."],
            "max_tokens": ["type": "integer", "minimum": 1, "maximum": 1_000_000, "default": 512],
            "temperature": ["type": "number", "minimum": 0, "maximum": 2, "default": 0.2],
            "system_prompt": ["type": "string", "maxLength": 65536, "description": "The system prompt; {{user}}, {{now}}, {{tools}}, {{conversation}} and {{preferences}} (the user's: language, units, verbosity, custom) are replaced."],
            "summary": ["type": "boolean", "default": false, "description": "Make chat_summary's text (GET /api/chat/conversations/{id}/summary) with this model; the extractive summary is given, saying so, when the model fails."],
            "history": ["type": "integer", "minimum": 0, "maximum": 200, "default": 20, "description": "How many earlier lines of the conversation go along."],
            "history_bytes": ["type": "integer", "minimum": 0, "maximum": 16_777_216, "default": 32768,
                              "description": "The most bytes of those lines that go along, the newest first: a line that does not fit is cut to what is left, and older ones stay behind (one long answer was resent with every later message)."],
            "tools": ["type": "array", "uniqueItems": true, "items": ["type": "string"], "default": [],
                      "description": "The agent's commands the model may call (e.g. status, task_run, workflow_approve, process_restart); each runs as the person chatting."],
            "confirm": ["type": "boolean", "default": true, "description": "A tool that changes something waits for the person's \"yes\"."],
            "max_tool_calls": ["type": "integer", "minimum": 0, "maximum": 50, "default": 5, "description": "The most tool calls for one message."],
            "stream": ["type": "boolean", "default": true, "description": "Ask the model for a streamed answer (server-sent events) and relay its text as it comes to the CLI, `POST /api/chat` with `\"stream\": true` and the dashboard; false asks for the answer whole."],
            "confidence": ["type": "number", "minimum": 0, "maximum": 1, "default": 0.5, "description": "The confidence it reports to the chatbot's routing."],
        ],
    ]

    private static let validator = try? JSONSchemaValidator(schema: schema)

    /// The problems of a chatbot's `llm` adapters as written (before `${env:…}` is resolved),
    /// at pointers relative to the process.
    static func problems(_ written: JSONObject) -> [(pointer: String, message: String)] {
        var problems: [(String, String)] = []
        for (index, item) in (written["logic_adapters"]?.arrayValue ?? []).enumerated() {
            let pointer = "/logic_adapters/\(index)"
            if item.stringValue == "llm" {
                problems.append((pointer, "an llm adapter needs its settings: {\"type\": \"llm\", \"base_url\": \"http://127.0.0.1:8080/v1\", \"model\": …}"))
                continue
            }
            guard item["type"]?.stringValue == "llm" else { continue }
            for error in validator?.validate(item) ?? [] { problems.append((pointer + error.instanceLocation, error.message)) }
            if let key = item["api_key"]?.stringValue, !(key.hasPrefix("${env:") && key.hasSuffix("}")) {
                problems.append((pointer + "/api_key", "expected the key from the environment, written as \"${env:NAME}\"; a key written in the settings file would be shown to whoever reads the settings"))
            }
            for (position, tool) in (item["tools"]?.arrayValue ?? []).enumerated() {
                guard let name = tool.stringValue else { continue }
                let offered = CommandTools.names.filter { !CommandTools.notForChat.contains($0) }
                if CommandTools.notForChat.contains(name) {
                    problems.append((pointer + "/tools/\(position)", "\"\(name)\" cannot be a chat tool: it would ask the chatbot that waits for the model's answer"))
                } else if CommandTools.named(name) == nil {
                    problems.append((pointer + "/tools/\(position)", "unknown tool \"\(name)\"\(Suggestions.hint(for: name, in: offered)); the tools are the agent's commands: \(offered.joined(separator: ", "))"))
                }
            }
        }
        return problems
    }
}
