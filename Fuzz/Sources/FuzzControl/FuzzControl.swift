@testable import AgentBase
@testable import AgentCommands
@testable import AgentLoop
@testable import AgentSupervision
import Foundation
import JSONSchema
import Logging
@testable import AgentRuntime

/// The control socket's request reader on arbitrary bytes, as any local client could send
/// them, and what the supervisor answers to the request. The first byte sets the size of the
/// reads the bytes arrive in. Every request gets exactly one answer, a JSON object with "ok";
/// nothing traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = input.first else { return 0 }
    let step = Int(first) + 1
    let bytes = input.dropFirst()
    var reader = ControlRequestReader()
    var offset = bytes.startIndex
    var outcome = ControlRequestReader.Outcome.incomplete
    while case .incomplete = outcome, offset < bytes.endIndex {
        let end = min(offset + step, bytes.endIndex)
        outcome = reader.append(bytes[offset..<end])
        offset = end
    }
    switch outcome {
    case .incomplete:
        return 0
    case .refused(let refusal):
        // Refused with a code and a message, as the socket answers it.
        guard !refusal.message.isEmpty else { fatalError("a refusal without a message: \(refusal)") }
        return 0
    case .line(let line):
        // A line that is not JSON is answered with its refusal, as the socket answers it.
        let request: Result<CheckedRequest, CommandError>
        switch ControlServer.checked(line) {
        case .failure(let notJSON):
            guard !notJSON.message.isEmpty else { fatalError("a refusal without a message: \(notJSON)") }
            return 0
        case .success(let checked): request = checked
        }
        // A control request that stops the agent or reloads it would end this supervisor's
        // usefulness for the next input; both are answered by a fresh one each time.
        let supervisor = Supervisor.make(configuration: SupervisorConfiguration(workerPath: "/nonexistent/agent-worker", environment: [:]),
                                         processes: [], console: ConsoleOutput(json: true, showEvents: false, fd: -1), logger: logger)
        // The socket's own path: the registry's check, then the command (events and history
        // are read off the loop and answered on it: the loop runs until they are).
        let answers = supervisor.inbox.isolated {
            var answers: [JSONValue] = []
            ControlFronts.control(request, peer: nil, partial: { _ in }, respond: { answers.append($0) }) { checked, caller, respond in
                supervisor.execute(checked, caller: caller, respond: respond)
            }
            let deadline = EventLoop.now() + 10
            while answers.isEmpty && EventLoop.now() < deadline { supervisor.loop.runOnce(maxWait: 0.01) }
            return answers
        }
        guard answers.count == 1, answers[0]["ok"]?.boolValue != nil else {
            fatalError("\(answers.count) answers to \(String(decoding: line, as: UTF8.self)): \(answers.map { $0.serialized() })")
        }
        _ = answers[0].serialized()
    }
    return 0
}

let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
