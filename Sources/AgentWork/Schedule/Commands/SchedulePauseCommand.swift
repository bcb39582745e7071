/// `schedule_pause`: pauses a schedule (kept across restarts); its fire times are skipped.
package enum SchedulePauseCommand: @preconcurrency SchedulePauseChange {
    package static let name = "schedule_pause"
    package static let summary = "Pauses a schedule (kept across restarts): its fire times are skipped until it is resumed."
    package static let pauses = true
}
