import AgentBase
import AgentSupervision
import JSONSchema

/// `stop`: stops every process and the agent (answered while it stops: a second stop is no error).
package enum StopCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    package static let name = "stop"
    package static let summary = "Stops every process and the agent."
    package static let routes: [CommandRoute] = [.post("/api/stop")]
    package static let mutating = true
    package static let answersWhileStopping = true
    package static let answerSchema = CommandSchema.okAnswer
    package static var examples: [(request: JSONValue, answer: OKAnswer)] { [([:], OKAnswer())] }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<OKAnswer, CommandError>) -> Void) {
        host.stopAgent()
        respond(.success(OKAnswer()))
    }
}
