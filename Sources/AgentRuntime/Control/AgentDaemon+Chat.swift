import AgentBase
import AgentCommands
import AgentCore
import Foundation
import JSONSchema

extension AgentDaemon {
    /// `agent-control chat [MESSAGE]`: one message and its answer, or a conversation at a
    /// prompt (alerts from monitors are shown as they join the conversation).
    public func chat(message: String?, conversation: String, context: JSONObject? = nil, user: String? = nil, interactive: Bool) -> Int32 {
        if let message { return ask(message, conversation: conversation, context: context, user: user) }
        var lastSeen = latestChatID(conversation) ?? 0
        if interactive { print("chatting with the agent (conversation \(conversation)); an empty line or Ctrl-D ends") }
        while true {
            if interactive {
                lastSeen = showNewAlerts(conversation, after: lastSeen)
                print("you> ", terminator: "")
                fflush(nil)
            }
            guard let line = readLine(), !line.trimmingCharacters(in: .whitespaces).isEmpty else { return 0 }
            _ = ask(line, conversation: conversation, context: context, user: user)
            lastSeen = latestChatID(conversation) ?? lastSeen
        }
    }

    /// Sends one message and prints the answer as it comes (a language model's answer streams);
    /// returns the exit status (3: not running).
    private func ask(_ text: String, conversation: String, context: JSONObject?, user: String?) -> Int32 {
        // The request carries the message as a JSON string, within the socket's request limit;
        // say so before sending rather than losing the message to a cut connection.
        let request = ChatCommand.request(.init(text: text, conversation: conversation, context: context, user: user, stream: true))
        let size = request.serialized().utf8.count
        guard size < ControlClient.maximumRequestBytes else {
            return Self.fail("the message is too large: \(text.utf8.count) bytes; a chat message can be at most about 1 MiB (the control socket takes requests of at most \(ControlClient.maximumRequestBytes) bytes, this one would be \(size))")
        }
        var shown = ""
        do {
            let answer = try ControlClient.send(request, paths: paths, timeout: 40) { piece in
                let text = piece["partial"]?.stringValue ?? ""
                print((shown.isEmpty ? "bot> " : "") + TerminalText.shown(text), terminator: "")
                fflush(nil)
                shown += text
            }
            guard answer["ok"] == true else {
                if !shown.isEmpty { print() }
                return Self.fail(answer["error"]?.stringValue ?? "the agent refused the message")
            }
            let whole = answer["text"]?.stringValue ?? ""
            // The pieces began the answer: its rest (an error that ended the stream). Otherwise
            // (a tool's turn came between) the answer as it is kept, on a line of its own.
            if shown.isEmpty {
                print("bot> \(TerminalText.shown(whole))")
            } else if whole.hasPrefix(shown) {
                print(TerminalText.shown(String(whole.dropFirst(shown.count))))
            } else {
                print("\nbot> \(TerminalText.shown(whole))")
            }
            return AgentLauncher.ExitCode.success
        } catch {
            if !shown.isEmpty { print() }
            return Self.fail(error)
        }
    }

    private func history(_ conversation: String, after: Int, limit: Int) -> [JSONValue]? {
        let answer = try? ControlClient.send(ChatHistoryCommand.request(.init(conversation: conversation, after: after, limit: limit)), paths: paths)
        guard answer?["ok"] == true else { return nil }
        return answer?["lines"]?.arrayValue
    }

    private func latestChatID(_ conversation: String) -> Int? {
        history(conversation, after: 0, limit: 1)?.last?["id"]?.numberValue?.intValue
    }

    private func showNewAlerts(_ conversation: String, after: Int) -> Int {
        let lines = history(conversation, after: after, limit: 100) ?? []
        for line in lines where line["role"]?.stringValue == "alert" {
            print(TerminalText.shown("alert from \(line["source"]?.stringValue ?? "?")> \(line["text"]?.stringValue ?? "")"))
        }
        return lines.last?["id"]?.numberValue?.intValue ?? after
    }

    /// `agent-control chat history` (`--history`): a conversation's lines, a user's, or a
    /// user's in a conversation; the caller's own lines are shown as "you".
    public func printChatHistory(conversation: String?, user: String? = nil, limit: Int) -> Int32 {
        do {
            let answer = try ControlClient.send(ChatHistoryCommand.request(.init(conversation: conversation, user: user, limit: limit)), paths: paths)
            guard answer["ok"] == true else { return Self.fail(answer["error"]?.stringValue ?? "no history") }
            let me = getpwuid(getuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
            for line in answer["lines"]?.arrayValue ?? [] {
                let time = line["time"]?.stringValue ?? "?"
                let role = line["role"]?.stringValue ?? "?"
                let source = line["source"]?.stringValue ?? "?"
                let voice = (line["confidence"]?.numberValue?.doubleValue).map { " (voice, confidence \(String(format: "%.2f", $0)))" } ?? ""
                let author = line["user"]?.stringValue
                let person = author == nil || author == me ? "you" : author!
                let who = switch role {
                case "user": person + voice
                case "alert": "alert from \(source)"
                case "tool": "tool \(source) for \(person)"
                default: "bot"
                }
                // Lines of several conversations (a user's): each says which.
                let place = conversation == nil ? "[\(line["conversation"]?.stringValue ?? "?")] " : ""
                // The text is another's (an adapter's, a model's, a user's): shown, not obeyed.
                print(TerminalText.shown("\(time)  \(place)\(who)> \(line["text"]?.stringValue ?? "")"))
            }
            return 0
        } catch {
            return Self.fail(error.description)
        }
    }

    /// `agent-control chat clear` (`--clear-history`).
    public func clearChatHistory(conversation: String?, user: String? = nil) -> Int32 {
        do {
            let answer = try ControlClient.send(ChatClearCommand.request(.init(conversation: conversation, user: user)), paths: paths)
            guard answer["ok"] == true else { return Self.fail(answer["error"]?.stringValue ?? "refused") }
            let whose = user.map { " of \($0)" } ?? ""
            print(conversation.map { "cleared the history\(whose) in conversation \($0)" } ?? "cleared the history\(whose) in every conversation")
            return 0
        } catch {
            return Self.fail(error.description)
        }
    }
}
