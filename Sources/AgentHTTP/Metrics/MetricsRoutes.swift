import AgentCommands
import Hummingbird
import JSONSchema

/// `GET /metrics`: the `metrics` command's answer in the Prometheus text format (version
/// 0.0.4), with the HTTP front's request counters.
struct MetricsRoutes: Sendable {
    let commands: CommandCenter
    let exporter: PrometheusExporter

    func register(on router: Router<AgentRequestContext>) {
        router.get("/metrics") { _, context in
            let caller = CommandCenter.Caller(front: "http", user: context.identity?.name, address: context.remoteAddress)
            let answer = await commands.execute(["command": "metrics"], caller: caller)
            guard answer["ok"]?.boolValue == true, let families = answer["families"]?.arrayValue else {
                return APIResponse.json(answer, status: APIResponse.status(of: answer))
            }
            var buffer = ByteBuffer()
            buffer.writeBytes(exporter.render(families))
            return Response(status: .ok,
                            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: buffer))
        }
    }
}
