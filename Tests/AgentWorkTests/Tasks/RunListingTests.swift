import AgentTestSupport
import AgentWork
import JSONSchema
import Testing

/// How a list shows a run: members longer than the limit go, named in `omitted` in order;
/// members a store already left out are named too; a record for lists reads back as written.
@Suite(.ownThreads) struct RunListingTests {
    static func text(_ bytes: Int) -> JSONValue { .string(String(repeating: "x", count: bytes - 2)) }

    @Test func membersLongerThanTheLimitAreLeftOutAndNamedInOrderAndShortOnesStay() {
        let run: JSONValue = ["id": "r", "output": Self.text(RunListing.memberLimit + 1), "input": Self.text(RunListing.memberLimit),
                              "error": Self.text(10_000)]
        let shown = RunListing.shown(run)
        #expect(shown["omitted"] == ["error", "output"])
        #expect(shown["input"] == Self.text(RunListing.memberLimit), "exactly at the limit: kept")
        #expect(shown["output"] == nil)
        #expect(shown["id"] == "r")
        #expect(RunListing.shown(["id": "r", "input": [:]]) == ["id": "r", "input": [:]], "nothing long: the run as it is")
    }

    @Test func membersTheStoreLeftOutAreNamedWithTheOnesLeftOutHere() {
        let shown = RunListing.shown(["id": "r", "input": [:], "error": Self.text(5_000)], omitted: ["input"])
        #expect(shown["omitted"] == ["error", "input"])
        #expect(shown["input"] == nil, "the default that stood in for it goes")
    }

    /// The store leaves out only members of twice the limit (a member's stored form may be the
    /// longer one); what it keeps, ``RunListing/shown(_:omitted:)`` measures again.
    @Test func aRecordForListsIsMadeOnlyForAMemberOfTwiceTheLimitAndSplitsBackIntoTheRecordAndTheNames() throws {
        let short: JSONValue = ["id": "r", "input": Self.text(2 * RunListing.memberLimit), "output": Self.text(3_000)]
        #expect(RunListing.listed(short, length: short.serialized().utf8.count) == nil)
        let long: JSONValue = ["id": "r", "input": Self.text(2 * RunListing.memberLimit + 1), "output": Self.text(3_000)]
        let listed = try #require(RunListing.listed(long, length: long.serialized().utf8.count))
        #expect(listed == ["id": "r", "output": Self.text(3_000), "omitted": ["input"], "record_length": .number(JSONNumber(long.serialized().utf8.count))])
        let (record, omitted) = RunListing.split(listed)
        #expect(record == ["id": "r", "output": Self.text(3_000)])
        #expect(omitted == ["input"])
        #expect(RunListing.split(short).omitted.isEmpty)
    }

    @Test func aListStopsAtItsByteLimitWithItsNewestRunsAndSaysSo() throws {
        let run: JSONValue = ["id": "r", "input": Self.text(RunListing.memberLimit), "output": Self.text(RunListing.memberLimit)]
        let runs = Array(repeating: run, count: 1_000)
        let answer = TaskRunsCommand.Answer(runs: runs, stored: true)
        let length = JSONValue.array(answer.runs).serialized().utf8.count
        #expect(answer.truncated == true)
        #expect(answer.note == RunListing.truncatedNote)
        #expect(length <= RunListing.answerLimit && length > RunListing.answerLimit - 9_000, "\(length) bytes, \(answer.runs.count) runs")
        let whole = TaskRunsCommand.Answer(runs: Array(runs.prefix(10)), stored: false, note: "the store is off")
        #expect(whole.runs.count == 10)
        #expect(whole.truncated == nil)
        #expect(whole.note == "the store is off")
        let workflows = WorkflowRunsCommand.Answer(runs: runs, stored: true)
        #expect(workflows.truncated == true && workflows.runs.count == answer.runs.count)
    }

    @Test func aLineShowsAnErrorsBeginningOrWhereALeftOutErrorIs() {
        #expect(RunListing.errorPreview(["error": .string(String(repeating: "e", count: 300))]) == String(repeating: "e", count: 200))
        #expect(RunListing.errorPreview(["omitted": ["error"]]) == "(longer than 4 KiB: show the run for it)")
        #expect(RunListing.errorPreview(["omitted": ["input"]]) == nil)
    }
}
