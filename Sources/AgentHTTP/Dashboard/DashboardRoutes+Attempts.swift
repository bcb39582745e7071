import AgentWork
import Foundation
import JSONSchema

/// The run page's attempts and who ran the run (issue 36 item 4).
extension DashboardRoutes {
    /// The facts that say which executor and which agent ran a run (its last attempt).
    static func ranBy(_ run: JSONValue, last: JSONValue?) -> [[String: Any]] {
        let executor = run["executor"]?.stringValue ?? last?["executor"]?.stringValue
        let agent = run["agent"]?.stringValue ?? last?["agent"]?.stringValue
        return [["label": "Executor", "value": executor ?? "the task's own", "field": "executor"],
                ["label": "Agent", "value": agent ?? "this agent", "field": "agent"]]
    }

    /// An attempt of `task_show` as the attempts table shows it.
    static func attemptRow(_ attempt: JSONValue) -> [String: Any] {
        var exit = ""
        if let code = attempt["exit_code"] { exit = "exit \(DashboardFormat.text(code))" }
        if let signal = attempt["signal"]?.stringValue { exit += exit.isEmpty ? signal : ", \(signal)" }
        var row: [String: Any] = [
            "number": DashboardFormat.text(attempt["attempt"]), "status": DashboardFormat.text(attempt["status"]),
            "started": DashboardFormat.text(attempt["started_at"]), "ended": DashboardFormat.text(attempt["ended_at"]),
            "took": DashboardFormat.number(attempt["execution_time"]).map { String(format: "%.3f s", $0) } ?? "", "exit": exit,
            "executor": attempt["executor"]?.stringValue ?? "the task's own", "agent": DashboardFormat.text(attempt["agent"]),
            "error": DashboardFormat.text(attempt["error"]),
        ]
        if let tail = attempt["stderr_tail"]?.stringValue, !tail.isEmpty { row["stderr"] = tail }
        if let tail = attempt["stdout_tail"]?.stringValue, !tail.isEmpty { row["stdout"] = tail }
        if attempt["from_run_record"] == true { row["fromRun"] = true }
        return row
    }
}
