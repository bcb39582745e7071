/// A process that produces events: reads a device, a file, an API or `/proc`, and emits
/// what it finds with ``ProcessContext/emit(_:payload:)``.
///
/// ```swift
/// struct Ticker: Datasource {
///     struct Settings: Decodable, Sendable { var interval: Double }
///     static let typeName = "ticker"
///     static let description = "Emits a tick every interval seconds."
///     static var settingsSchema: Schema {
///         .object(["interval": .number(minimum: 0.01, default: 1.0)])
///     }
///     let settings: Settings
///     init(settings: Settings) { self.settings = settings }
///     func run(context: ProcessContext) async throws {
///         while true {
///             try context.emit("tick", payload: ["n": 1])
///             try await context.sleep(seconds: settings.interval)
///         }
///     }
/// }
/// ```
public protocol Datasource: AgentProcess {}

extension Datasource {
    /// ``ProcessKind/datasource``.
    public static var kind: ProcessKind { .datasource }
}
