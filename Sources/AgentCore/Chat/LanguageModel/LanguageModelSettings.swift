import Foundation
import JSONSchema

/// The `llm` adapter's settings (checked by the settings validator first; read again here so
/// the worker never trusts a shape it did not check).
struct LanguageModelSettings {
    /// `http://127.0.0.1:8080/v1`: `/chat/completions` is added.
    var baseURL: URL
    var model: String
    /// Written `${env:NAME}` (the validator refuses a literal) and resolved before the worker gets it.
    var apiKey: String?
    /// Seconds for one request to the model.
    var timeout = 20.0
    var maxTokens = 512
    var temperature = 0.2
    var systemPrompt = LanguageModelSettings.defaultPrompt
    /// How many earlier lines of the conversation go along.
    var history = 20
    /// The most bytes of those lines' text, the newest first.
    var historyBytes = 32768
    /// The agent's commands the model may call (``CommandTools`` names).
    var tools: [String] = []
    /// Mutating tools wait for the person's "yes".
    var confirm = true
    /// The most tool calls the model makes for one message.
    var maxToolCalls = 5
    /// Asks for the answer as server-sent events and relays its text as it comes (`chat.partial`).
    var stream = true
    /// What the adapter tells the chatbot's routing for any message (0…1).
    var confidence = 0.5
    var name = "llm"

    static let defaultPrompt = """
        You are the assistant of an agent runtime: you answer questions about it and manage it with your tools \
        when asked. Use a tool rather than guess; say what you did and what came back, briefly. \
        You are talking to {{user}}; it is {{now}}. Your tools: {{tools}}. \
        Their preferences (answer in their language and units, as briefly or fully as they prefer): {{preferences}}.
        """

    init(_ object: JSONObject) throws {
        guard let base = object["base_url"]?.stringValue, let url = URL(string: base.hasSuffix("/") ? String(base.dropLast()) : base), url.scheme == "http" else {
            throw ChatError("an llm adapter needs \"base_url\": the server's http:// address, e.g. \"http://127.0.0.1:8080/v1\"")
        }
        baseURL = url
        guard let model = object["model"]?.stringValue else { throw ChatError("an llm adapter needs \"model\"") }
        self.model = model
        apiKey = object["api_key"]?.stringValue
        timeout = object["timeout"]?.numberValue?.doubleValue ?? timeout
        maxTokens = object["max_tokens"]?.numberValue?.intValue ?? maxTokens
        temperature = object["temperature"]?.numberValue?.doubleValue ?? temperature
        systemPrompt = object["system_prompt"]?.stringValue ?? systemPrompt
        history = min(max(0, object["history"]?.numberValue?.intValue ?? history), 200)
        historyBytes = min(max(0, object["history_bytes"]?.numberValue?.intValue ?? historyBytes), 16 << 20)
        tools = object["tools"]?.arrayValue?.compactMap(\.stringValue) ?? []
        confirm = object["confirm"]?.boolValue ?? confirm
        maxToolCalls = min(max(0, object["max_tool_calls"]?.numberValue?.intValue ?? maxToolCalls), 50)
        stream = object["stream"]?.boolValue ?? stream
        confidence = min(max(0, object["confidence"]?.numberValue?.doubleValue ?? confidence), 1)
        name = object["name"]?.stringValue ?? name
    }

    var endpoint: URL { baseURL.appendingPathComponent("chat").appendingPathComponent("completions") }
}
