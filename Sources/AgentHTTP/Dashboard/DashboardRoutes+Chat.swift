import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    static func conversation(_ text: String?) -> String {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.count <= 200 else { return "default" }
        return text
    }

    /// A conversation's history (`chat_history`) and the form that sends a message.
    func chatPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let conversation = Self.conversation(request.uri.queryParameters["conversation"].map(String.init))
        let answer = await run(["command": "chat_history", "conversation": .string(conversation), "limit": 200], context)
        var data: [String: Any] = ["conversation": conversation]
        // A conversation nothing was said in yet is unknown to the API (404): here it is the
        // empty page that starts it.
        if answer["ok"]?.boolValue == true || answer["code"]?.stringValue == "not_found" {
            let lines = answer["lines"]?.arrayValue ?? answer["messages"]?.arrayValue ?? []
            data["messages"] = lines.map { line in
                let role = line["role"]?.stringValue ?? "bot"
                let voice = (line["confidence"]?.numberValue?.doubleValue).map { " (voice, \(String(format: "%.2f", $0)))" } ?? ""
                // Another user's line (an admin sees everyone's) by its user's name.
                let author = line["user"]?.stringValue
                let person = author == nil || author == context.identity?.name ? "you" : author!
                let who = role == "user" ? person + voice : role == "alert" ? "alert from \(DashboardFormat.text(line["source"]))"
                    : role == "tool" ? "tool \(DashboardFormat.text(line["source"])) for \(person)" : "bot"
                let time = DashboardFormat.number(line["time"]).map(DashboardFormat.time) ?? DashboardFormat.text(line["time"])
                return ["role": role, "who": who, "text": DashboardFormat.text(line["text"]), "time": time]
            }
        } else {
            data["error"] = Self.problem(answer)
        }
        return page("chat", title: "Chat", data: data, request: request, context: context)
    }

    /// `POST /chat`: the `chat` command; the answer joins the history the next page shows.
    func chatSend(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let conversation = Self.conversation(form["conversation"])
        let back = "/chat?conversation=" + (conversation.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "default")
        guard let text = form["text"], !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return Self.redirect(to: back, message: "write a message first", failed: true)
        }
        let answer = await run(["command": "chat", "text": .string(text), "conversation": .string(conversation)], context)
        guard answer["ok"]?.boolValue == true else {
            return Self.redirect(to: back, message: "the chatbot did not answer: \(Self.problem(answer))", failed: true)
        }
        return Response(status: .seeOther, headers: [.location: back, .cacheControl: "no-store"])
    }

    /// `POST /chat/clear`: the `chat_clear` command.
    func chatClear(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let conversation = Self.conversation(form["conversation"])
        let answer = await run(["command": "chat_clear", "conversation": .string(conversation)], context)
        let ok = answer["ok"]?.boolValue == true
        return Self.redirect(to: "/chat?conversation=" + (conversation.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "default"),
                             message: ok ? "cleared \(conversation)" : Self.problem(answer), failed: !ok)
    }
}
