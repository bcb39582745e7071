import AgentCore
import AgentTestSupport
@testable import AgentSupervision
import Foundation
import Testing

/// What the sweep of orphans reads of the processes it kills: their descendants, within a
/// budget of /proc reads per sweep, and their names as a log line may show them.
@Suite(.ownThreads) struct OrphanSweeperTests {
    /// A chain of `argv[1]` processes below the first, each the child of the one before; each
    /// dies with its parent and waits.
    static let chain = """
    #include <signal.h>
    #include <stdlib.h>
    #include <sys/prctl.h>
    #include <unistd.h>
    int main(int argc, char **argv) {
        int depth = argc > 1 ? atoi(argv[1]) : 0;
        for (int i = 0; i < depth; i++) {
            if (fork() != 0) break;
            prctl(PR_SET_PDEATHSIG, SIGKILL);
        }
        for (;;) pause();
    }
    """

    /// The chain below `pid`, from /proc (its first `count` members).
    static func chainBelow(_ pid: pid_t, count: Int) -> [pid_t] {
        var found: [pid_t] = []
        var parent = pid
        let deadline = Date().addingTimeInterval(60)
        while found.count < count, Date() < deadline {
            let text = (try? String(contentsOfFile: "/proc/\(parent)/task/\(parent)/children", encoding: .utf8)) ?? ""
            if let child = text.split(separator: " ").first.flatMap({ pid_t($0) }) {
                found.append(child)
                parent = child
            } else {
                usleep(2_000)
            }
        }
        return found
    }

    @Test func descendantsAreListedParentsFirstAndNoFurtherThanTheSweepsBudget() throws {
        let root = try ProcStatTests.spawn([try ProcStatTests.program(Self.chain), "4"])
        defer {
            kill(root, SIGKILL)
            ProcStatTests.reap(root)
        }
        let members = Self.chainBelow(root, count: 4)
        try #require(members.count == 4, "the chain forked: \(members)")
        var budget = 100
        #expect(OrphanSweeper.descendants(of: root, budget: &budget) == members)
        #expect(budget == 100 - 5, "one children file per member and the root (one thread each)")
        // Two reads: the root's children, then the first child's.
        var small = 2
        #expect(OrphanSweeper.descendants(of: root, budget: &small) == Array(members.prefix(2)))
        #expect(small == 0)
    }

    @Test func aNameWithControlCharactersIsShownWithoutThem() throws {
        let named = try ProcStatTests.spawn([try ProcStatTests.program("""
        #include <sys/prctl.h>
        #include <unistd.h>
        int main(void) {
            prctl(PR_SET_NAME, "a\\nb\\033[2J\\177c");
            for (;;) pause();
        }
        """)])
        defer {
            kill(named, SIGKILL)
            ProcStatTests.reap(named)
        }
        let deadline = Date().addingTimeInterval(60)
        while !ProcStat.commandName(of: named).hasPrefix("a?"), Date() < deadline { usleep(2_000) }
        #expect(ProcStat.commandName(of: named) == "a?b?[2J?c")
    }
}
