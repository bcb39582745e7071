import AgentModuleABI

/// A module's task entry points (ABI 2), as its `agent_module` gives them.
struct TaskEntryPoints {
    /// The entry points that prepare a run ahead of its instant and start it then.
    struct Prepared {
        var prepare: agent_task_prepare_fn
        var start: agent_task_start_fn
    }

    var create: agent_task_create_fn
    var run: agent_task_run_fn
    var cancel: agent_task_cancel_fn?
    /// Nil unless the module has `task_prepare`, `task_start` and `task_cancel`.
    var prepared: Prepared?
}
