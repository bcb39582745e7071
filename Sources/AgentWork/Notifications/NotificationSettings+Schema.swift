import JSONSchema

extension NotificationSettings {
    /// A task's `"notify"`: an object, or `false` to turn the agent-wide defaults off.
    package static let taskSchema: JSONValue = [
        "description": "Notifications about this task's runs (merged over the agent's \"notifications\"; false: none for this task).",
        "type": ["object", "boolean"],
        "if": ["type": "object"],
        "then": object(extra: []),
        "else": ["const": false],
    ]

    /// The agent-wide `"notifications"`: defaults every task's `notify` is merged over.
    package static let defaultsSchema: JSONValue = object(extra: [
        ("queue", [
            "type": "integer", "minimum": 1, "maximum": 100_000, "default": .number(JSONNumber(defaultQueue)),
            "description": "Notifications waiting for delivery at most; beyond, the oldest is dropped and counted.",
        ]),
    ])

    private static let seconds: JSONValue = ["type": "number", "exclusiveMinimum": 0, "maximum": 3600]

    private static func object(extra: [(String, JSONValue)]) -> JSONValue {
        [
            "type": "object",
            "additionalProperties": false,
            "properties": .object(JSONObject([
                ("on", [
                    "type": "array", "items": ["enum": ["failure", "retry", "success"]], "uniqueItems": true,
                    "default": ["failure"],
                    "description": "failure: a run failed, timed out or was interrupted with no attempt left; retry: an attempt failed and another follows; success: a run succeeded.",
                ]),
                ("outputs", [
                    "type": ["boolean", "array"], "items": ["type": "string", "minLength": 1],
                    "description": "Also send a JSON record (event type task.notification) to the agent's outputs: true for every output taking events, or a list of output names.",
                ]),
                ("email", email),
            ] + extra)),
        ]
    }

    private static let email: JSONValue = [
        "type": "object",
        "additionalProperties": false,
        "description": "A message over SMTP (libcurl) for each notification.",
        "properties": [
            "url": ["type": "string", "description": "smtp://host:port (STARTTLS, see starttls) or smtps://host:port (TLS from the start)."],
            "starttls": ["enum": ["required", "try", "never"], "default": "required",
                         "description": "smtp:// only: required: fail unless the server upgrades to TLS; try: upgrade when offered; never: plain text (try and never are refused with a password)."],
            "ca_file": ["type": "string", "minLength": 1, "description": "PEM file of CA certificates to trust instead of the system's (relative to the agent's folder)."],
            "username": ["type": "string", "description": "AUTH user; ${env:NAME} is replaced by the environment variable."],
            "password": ["type": "string", "description": "AUTH password: only as ${env:NAME} (never written in the file)."],
            "from": ["type": "string", "description": "The sender's address."],
            "to": ["type": ["string", "array"], "items": ["type": "string"], "minItems": 1, "description": "One address or a list."],
            "subject": ["type": "string", "description": "Mustache template of the subject (see docs/tasks.md, \"Task notifications\")."],
            "body": ["type": "string", "description": "Mustache template of the plain-text body."],
            "connect_timeout": seconds.merging(["default": .number(JSONNumber(defaultConnectTimeout)), "description": "Seconds to connect."]),
            "timeout": seconds.merging(["default": .number(JSONNumber(defaultTimeout)), "description": "Seconds for a whole attempt."]),
            "max_retries": ["type": "integer", "minimum": 0, "maximum": 10, "default": .number(JSONNumber(defaultMaxRetries)),
                            "description": "Further attempts after a failed one; then the notification is dropped and counted."],
            "retry_delay": ["type": "number", "minimum": 0, "maximum": 3600, "default": .number(JSONNumber(defaultRetryDelay)),
                            "description": "Seconds before the first retry, doubled for each further one."],
        ],
    ]
}

private extension JSONValue {
    func merging(_ other: JSONObject) -> JSONValue {
        guard case .object(var object) = self else { return self }
        for (key, value) in other { object[key] = value }
        return .object(object)
    }
}
