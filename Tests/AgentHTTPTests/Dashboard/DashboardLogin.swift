import AgentTestSupport
import Foundation

/// The start of a dashboard page's browser test: an agent from `settings` (its `HASH`
/// replaced by the bcrypt hash of ``DashboardBrowserTests/password``), a browser at one of its
/// pages, logged in as `user` (alice unless said), the page shown. ``close()`` quits the browser and stops the agent.
struct DashboardLogin {
    let agent: AgentRun
    let browser: WebDriver
    /// `http://127.0.0.1:PORT`.
    let base: String

    /// - Parameters:
    ///   - page: the path to open, e.g. `/tasks`.
    ///   - selector: an element that shows the page is there after the login.
    ///   - environment: for the agent, e.g. the fleet's `PGPASSWORD`.
    init(settings: String, page: String, showing selector: String, width: Int = 1200, height: Int = 800,
         environment: [String: String] = [:], user: String = "alice") throws {
        let password = DashboardBrowserTests.password
        agent = try AgentRun(settings: settings.replacingOccurrences(of: "HASH", with: try APIAgent.hash(password)), environment: environment)
        guard let line = agent.waitForLine(onStderr: true, { $0.contains("http: listening on http://") }),
              let range = line.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            _ = agent.stop()
            throw WebDriver.Failure(description: "the HTTP front did not start\n\(agent.transcript)")
        }
        base = String(line[range])
        do {
            browser = try WebDriver(width: width, height: height, directory: agent.directory)
        } catch {
            _ = agent.stop()
            throw error
        }
        do {
            try browser.navigate(to: base + page)
            try browser.type(user, into: try browser.element("#login-user"))
            try browser.type(password, into: try browser.element("#login-password"))
            try browser.click(try browser.element("#login-form button"))
            let browser = browser
            try browser.wait("the page \(page) after the login") { try browser.find(selector) != nil }
        } catch {
            close()
            throw error
        }
    }

    func close() {
        browser.quit()
        _ = agent.stop()
    }
}
