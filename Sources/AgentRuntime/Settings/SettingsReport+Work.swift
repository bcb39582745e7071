import AgentWork

extension SettingsReport {
    /// What the settings give the work layer (``WorkHost``), at start and at each reload.
    package var workDefinitions: WorkHost.Definitions {
        WorkHost.Definitions(tasks: tasks, executors: executors, assignment: assignment, schedules: schedules, workflows: workflows,
                             roles: httpRoles, moduleTasks: moduleTasks, events: events)
    }
}
