extension AgentProcess {
    /// Decodes settings from JSON the way the runtime does (schema defaults filled in), so that
    /// a module's tests can check its settings and its `settings_template.json`.
    public static func settings(fromJSON json: String) throws -> Settings {
        try SettingsDecoding.decode(Settings.self, from: Array(json.utf8), schema: settingsSchema)
    }
}

extension LogicAdapter {
    /// Decodes settings from JSON the way the runtime does (schema defaults filled in).
    public static func settings(fromJSON json: String) throws -> Settings {
        try SettingsDecoding.decode(Settings.self, from: Array(json.utf8), schema: settingsSchema)
    }
}

extension AgentProcess where Settings: SettingsDeclaration {
    /// The schema of settings declared once with ``Setting``s.
    public static var settingsSchema: Schema { Settings.schema }
}

extension LogicAdapter where Settings: SettingsDeclaration {
    /// The schema of settings declared once with ``Setting``s.
    public static var settingsSchema: Schema { Settings.schema }
}

extension TaskHandler where Settings: SettingsDeclaration {
    /// The schema of a task's settings declared once with ``Setting``s.
    public static var settingsSchema: Schema { Settings.schema }
}

extension TaskHandler where Input: SettingsDeclaration {
    /// The schema of a task's input declared once with ``Setting``s.
    public static var inputSchema: Schema { Input.schema }
}
