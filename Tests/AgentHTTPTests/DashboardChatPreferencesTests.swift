import AgentTestSupport
import Foundation
import Testing

/// The dashboard's chat preferences page: a read-only user sees and changes their own
/// preferences with the form (session and CSRF token); a bad value is said so.
@Suite(.ownThreads) struct DashboardChatPreferencesTests {
    @Test func aReadOnlyUserChangesTheirOwnPreferencesWithTheForm() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), processes: """
        {"chat": {"type": "chatbot", "logic_adapters": ["features"], "preferences_schema": {"type": "object", "properties": {"max_lines": {"type": "integer", "minimum": 1}}}}}
        """)
        let (cookie, csrf, _) = try HTTPSession.login(agent, user: "bob")
        let chat = try agent.request("GET", "/chat", headers: ["Cookie": cookie])
        #expect(chat.body.contains(#"href="/chat/preferences""#), "\(chat.body)")
        let page = try agent.request("GET", "/chat/preferences", headers: ["Cookie": cookie])
        #expect(page.status == 200 && page.body.contains("Chat preferences of bob") && page.body.contains(#"id="preferences-form""#), "\(page.description)")

        let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": agent.base]
        let saved = try agent.request("POST", "/chat/preferences", headers: form, body: "csrf=\(csrf)&language=fr&units=imperial&verbosity=&custom=%7B%22max_lines%22%3A5%7D")
        #expect(saved.status == 303 && saved.setCookie("agent_flash")?.contains("preferences%20saved") == true, "\(saved.description)")
        let kept = try agent.request("GET", "/api/chat/users/bob/preferences", headers: APIAgent.bearer(APIAgent.adminToken)).json?["preferences"] as? [String: Any]
        #expect(kept?["language"] as? String == "fr" && kept?["units"] as? String == "imperial" && kept?["verbosity"] == nil, "\(String(describing: kept))")
        #expect((kept?["custom"] as? [String: Any])?["max_lines"] as? Int == 5, "\(String(describing: kept))")
        let shown = try agent.request("GET", "/chat/preferences", headers: ["Cookie": cookie])
        #expect(shown.body.contains(#"value="fr""#) && shown.body.contains(#"<option value="imperial" selected>"#), "\(shown.body)")

        let bad = try agent.request("POST", "/chat/preferences", headers: form, body: "csrf=\(csrf)&custom=%7B%22max_lines%22%3A0%7D")
        #expect(bad.status == 303 && bad.setCookie("agent_flash")?.contains("preferences%5Fschema") == true, "\(bad.description)")
        let forged = try agent.request("POST", "/chat/preferences", headers: form, body: "language=de")
        #expect(forged.status == 403, "\(forged.description)")
    }
}
