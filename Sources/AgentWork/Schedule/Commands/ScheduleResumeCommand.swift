/// `schedule_resume`: resumes a paused schedule from now.
package enum ScheduleResumeCommand: @preconcurrency SchedulePauseChange {
    package static let name = "schedule_resume"
    package static let summary = "Resumes a paused schedule from now (the fire times while paused are recorded as skipped)."
    package static let pauses = false
}
