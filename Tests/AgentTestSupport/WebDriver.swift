import Foundation

/// A small W3C WebDriver client for browser tests: starts Debian's `chromedriver` on a free
/// loopback port, opens one headless Chromium session, and speaks plain HTTP/JSON to it
/// (navigate, find elements, click, type, read text, run a script, take a screenshot).
/// `quit()` deletes the session and ends chromedriver.
package final class WebDriver: @unchecked Sendable {
    /// Why no browser could be had: the test that needs one is skipped saying so.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) { self.description = description }
    }

    package static let chromium = "/usr/bin/chromium"
    package static let chromedriver = "/usr/bin/chromedriver"

    /// Why a browser cannot be had here, or nil when Chromium and chromedriver are installed.
    package static var unavailableReason: String? {
        for path in [chromium, chromedriver] where !FileManager.default.isExecutableFile(atPath: path) {
            return "\(path) is not installed (apt-get install chromium chromium-driver)"
        }
        return nil
    }

    private let driver = TestProcess()
    private let port: Int
    package private(set) var session = ""
    private let logFile: String

    /// Starts chromedriver and a headless Chromium session with a `width`×`height` window.
    package init(width: Int = 1000, height: Int = 700, directory: String) throws {
        if let reason = Self.unavailableReason { throw Unavailable(description: reason) }
        port = try Self.freePort()
        logFile = directory + "/chromedriver.log"
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        driver.executableURL = URL(fileURLWithPath: Self.chromedriver)
        driver.arguments = ["--port=\(port)", "--log-path=\(logFile)"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        driver.standardInput = FileHandle.nullDevice
        try driver.run()
        let deadline = Date().addingTimeInterval(20)
        while true {
            if let status = try? request("GET", "/status", timeout: 2), (status["value"] as? [String: Any])?["ready"] as? Bool == true { break }
            guard Date() < deadline, driver.isRunning else {
                quit()
                throw Unavailable(description: "chromedriver did not become ready within 20 s (log: \(logFile))")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        var args = ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--window-size=\(width),\(height)",
                    "--user-data-dir=\(directory)/chromium-profile"]
        if getuid() == 0 { args.append("--no-sandbox") }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": ["binary": Self.chromium, "args": args],
        ]]]
        do {
            let answer = try request("POST", "/session", capabilities, timeout: 60)
            guard let id = (answer["value"] as? [String: Any])?["sessionId"] as? String else { throw Failure(description: "no session id in \(answer)") }
            session = id
        } catch {
            quit()
            throw Unavailable(description: "Chromium did not start a session: \(error)")
        }
    }

    deinit { quit() }

    /// Deletes the session and ends chromedriver (and with it the browser).
    package func quit() {
        if !session.isEmpty {
            _ = try? request("DELETE", "/session/\(session)", timeout: 15)
            session = ""
        }
        if driver.isRunning {
            driver.terminate()
            let deadline = Date().addingTimeInterval(5)
            while driver.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
        }
    }

    // MARK: Commands

    package func navigate(to url: String) throws {
        _ = try command("POST", "/url", ["url": url])
    }

    package var currentURL: String { get throws { try command("GET", "/url") as? String ?? "" } }

    /// The first element matching the CSS selector, or nil.
    package func find(_ css: String) throws -> String? {
        try findAll(css).first
    }

    package func findAll(_ css: String) throws -> [String] {
        let found = try command("POST", "/elements", ["using": "css selector", "value": css]) as? [[String: Any]] ?? []
        return found.compactMap { $0[Self.elementKey] as? String }
    }

    /// The element, waiting up to `timeout` seconds for it to appear.
    package func element(_ css: String, timeout: Double = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let id = try find(css) { return id }
            guard Date() < deadline else { throw Failure(description: "no element \(css) within \(timeout) s on \((try? currentURL) ?? "?")") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    package func click(_ element: String) throws {
        _ = try command("POST", "/element/\(element)/click", [:])
    }

    package func clear(_ element: String) throws {
        _ = try command("POST", "/element/\(element)/clear", [:])
    }

    package func type(_ text: String, into element: String) throws {
        _ = try command("POST", "/element/\(element)/value", ["text": text])
    }

    package func text(of element: String) throws -> String {
        try command("GET", "/element/\(element)/text") as? String ?? ""
    }

    /// The visible text of the first element matching `css` ("" when there is none), read in
    /// the page in one step: found and read apart, the element could be replaced in between
    /// (the page's script refreshes rows, a form's answer loads a new page) and go stale.
    package func text(_ css: String) throws -> String {
        try execute("var e = document.querySelector(arguments[0]); return e ? e.innerText : \"\";", [css]) as? String ?? ""
    }

    /// Runs `script` (a function body) in the page and returns its result.
    @discardableResult
    package func execute(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "/execute/sync", ["script": script, "args": arguments])
    }

    /// Waits until `condition` holds (checked every 0.1 s), at most `timeout` seconds.
    package func wait(_ what: String, timeout: Double = 60, until condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw Failure(description: "waited \(timeout) s for \(what) on \((try? currentURL) ?? "?")") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// A PNG of the window.
    package func screenshot(to path: String) throws {
        guard let encoded = try command("GET", "/screenshot") as? String, let data = Data(base64Encoded: encoded) else {
            throw Failure(description: "no screenshot")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    // MARK: The wire

    package static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        let answer = try request(method, "/session/\(session)" + path, body, timeout: 60)
        return answer["value"]
    }

    private func request(_ method: String, _ path: String, _ body: [String: Any]? = nil, timeout: Double) throws -> [String: Any] {
        let data = try HTTPExchange.send(method, port: port, path: path, body: try body.map { try JSONSerialization.data(withJSONObject: $0) },
                                         timeout: timeout)
        let status = data.status
        let bodyData = data.body
        let object = (try? JSONSerialization.jsonObject(with: bodyData)) as? [String: Any] ?? [:]
        guard (200..<300).contains(status) else {
            let value = object["value"] as? [String: Any]
            throw Failure(description: "WebDriver \(method) \(path): \(status) \(value?["error"] ?? "") \(value?["message"] ?? String(decoding: bodyData, as: UTF8.self))")
        }
        return object
    }

    /// A port nobody listens on now (bound to 0, read, closed).
    package static func freePort() throws -> Int {
        let bound: LoopbackListener
        do { bound = try LoopbackListener(backlog: nil) } catch { throw Failure(description: "\(error)") }
        defer { bound.close() }
        return bound.port
    }
}
