import AgentTestSupport
import Foundation
import Testing

/// A module that closes the worker's channel to the supervisor (a naive daemonizer closing
/// every descriptor, a `shutdown` on the wrong one) and runs on can neither emit nor answer: it
/// showed `running` for ever. It is killed, saying why, and restarted as its policy says.
@Suite(.ownThreads) struct ClosedChannelTests {
    @Test func aWorkerThatClosesItsChannelAndRunsOnIsKilledAndRestarted() throws {
        // The channel is the worker's descriptor 3; only its first life closes it.
        let library = try CModuleFixture.greetingModule("hangup", type: "hangup", greeting: "greeted", top: """
            #include <stdio.h>
            #include <stdlib.h>
            #include <sys/socket.h>
            #include <unistd.h>
            """, inRun: """
            const char *again = getenv("HANGUP_MARK");
            if (again && access(again, F_OK) != 0) {
                FILE *mark = fopen(again, "w");
                if (mark) fclose(mark);
                h->log(h->host_ctx, AGENT_LOG_INFO, "closing my channel", 18);
                shutdown(3, SHUT_WR);
                for (;;) pause();
            }
            """)
        let directory = TestPaths.temporaryDirectory("hangup")
        let run = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "processes": {"one": {"type": "hangup"}}}"#,
                               arguments: ["--no-build", "--quiet"], environment: ["HANGUP_MARK": directory + "/closed"])
        defer { _ = run.stop() }
        let said = run.waitForLine(onStderr: true, timeout: 120) { $0.contains("closed its channel to the supervisor but runs on") }
        #expect(said != nil, "\(run.transcript)")
        // Its next life greets and runs.
        #expect(run.waitForLine(onStderr: true, timeout: 120) { $0.contains("[one] greeted") } != nil, "\(run.transcript)")
        #expect(run.stop() == 0, "\(run.transcript)")
    }
}
