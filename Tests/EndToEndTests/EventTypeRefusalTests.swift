import AgentTestSupport
import Foundation
import Testing

/// A module library's event types are checked where they are routed: a type with control
/// characters is refused (not stored, shown or delivered) and logged, escaped.
@Suite(.ownThreads) struct EventTypeRefusalTests {
    @Test func anEventTypeWithControlCharactersFromALibraryIsRefusedAndLoggedEscaped() throws {
        let library = try CModuleFixture.greetingModule("badtypes", type: "emitter", greeting: "emitted", inRun: """
            const char *bad = "bad\\x1b[31mtype";
            h->emit(h->host_ctx, bad, strlen(bad), "{}", 2);
            h->emit(h->host_ctx, "nul\\0secret", 10, "{}", 2);
            for (int i = 0; i < 3; i++) h->emit(h->host_ctx, "good", 4, "{}", 2);
            """)
        let run = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "processes": {"one": {"type": "emitter"}}}"#,
                               arguments: ["--no-build", "--json"])
        defer { _ = run.stop() }
        #expect(run.waitForLines(count: 3) { $0.contains(#""type":"good""#) }.count == 3, "\(run.transcript)")
        let refused = run.waitForLine(onStderr: true) { $0.contains("whose type holds control characters") }
        #expect(refused != nil, "\(run.transcript)")
        #expect(refused?.contains("\u{1B}") == false, "the log shows the type escaped: \(refused ?? "")")
        #expect(!run.stdoutLines.contains { $0.contains("bad") || $0.contains("secret") || $0.contains(#""type":"nul""#) }, "\(run.transcript)")
    }
}
