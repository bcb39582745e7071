/// The spellings that turn one of the runtime's environment switches off (`AGENT_…=0`): the
/// same in agent-control, the fork server and the workers.
package enum EnvironmentSwitch {
    /// Whether `value` says off: `0`, `no`, `false` or `off`, in any case.
    package static func isOff(_ value: String?) -> Bool {
        ["0", "no", "false", "off"].contains(value?.lowercased() ?? "")
    }

    /// Whether `value` says on: `1`, `yes`, `true` or `on`, in any case.
    package static func isOn(_ value: String?) -> Bool {
        ["1", "yes", "true", "on"].contains(value?.lowercased() ?? "")
    }
}
