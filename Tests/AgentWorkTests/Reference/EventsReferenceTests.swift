@testable import AgentWork
import AgentTestSupport
import Testing

/// docs/reference/events.md is what the runtime's event declarations generate. (That what is
/// published matches the declarations is checked as it is published: ``RuntimeEvent/payload(_:)``
/// asserts it in every test that runs a task, a schedule or a workflow.)
@Suite(.ownThreads) struct EventsReferenceTests {
    @Test func theCheckedInEventsReferenceIsWhatTheDeclarationsGenerate() {
        CheckedInReference.expectCurrent(EventsReference.markdown(), "events.md")
    }

    @Test func everyTaskStatusScheduleOutcomeAndWorkflowEndHasItsDeclaredEvent() {
        let declared = Set(RuntimeEvent.all.map(\.type))
        #expect(declared.count == RuntimeEvent.all.count, "an event type declared twice")
        for status in TaskRun.Status.allCases { #expect(declared.contains(RuntimeEvent.task(status).type)) }
        for outcome in ScheduleHistoryEntry.Outcome.allCases { #expect(RuntimeEvent.schedule(outcome).type == "schedule." + outcome.rawValue) }
        for status in WorkflowRun.Status.allCases where status.isFinished {
            #expect(RuntimeEvent.workflow(status)?.type == "workflow." + status.rawValue)
        }
    }
}
