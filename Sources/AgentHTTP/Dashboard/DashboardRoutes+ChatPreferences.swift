import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// `/chat/preferences`: the logged-in user's chat preferences (`chat_preferences`) and the
    /// form that changes them; any role, for their own.
    func chatPreferencesPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let answer = await run(["command": "chat_preferences"], context)
        var data: [String: Any] = ["user": context.identity?.name ?? ""]
        if answer["ok"]?.boolValue == true, let preferences = answer["preferences"] {
            data["language"] = preferences["language"]?.stringValue ?? ""
            for (key, choices) in [("units", ["metric", "imperial"]), ("verbosity", ["brief", "normal", "detailed"])] {
                let current = preferences[key]?.stringValue
                data[key] = ([""] + choices).map { ["value": $0, "label": $0.isEmpty ? "(not set)" : $0, "selected": $0 == (current ?? "")] as [String: Any] }
            }
            data["custom"] = (preferences["custom"] ?? [:]).serialized()
        } else {
            data["error"] = Self.problem(answer)
        }
        return page("chatPreferences", title: "Chat preferences", nav: "chat", data: data, request: request, context: context)
    }

    /// `POST /chat/preferences`: the `chat_preferences_set` command with the form's members
    /// (an empty field leaves its preference as it is; custom: a JSON object, null removes a member).
    func chatPreferencesSave(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        var command: JSONObject = ["command": "chat_preferences_set"]
        for key in ["language", "units", "verbosity"] {
            if let value = form[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { command[key] = .string(value) }
        }
        if let text = form["custom"]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
            guard case .object(let custom)? = try? JSONValue.parse(text) else {
                return Self.redirect(to: "/chat/preferences", message: "custom: expected a JSON object, e.g. {\"timezone\": \"Europe/Paris\"}", failed: true)
            }
            command["custom"] = .object(custom)
        }
        let answer = await run(command, context)
        let ok = answer["ok"]?.boolValue == true
        return Self.redirect(to: "/chat/preferences", message: ok ? "preferences saved" : Self.problem(answer), failed: !ok)
    }
}
