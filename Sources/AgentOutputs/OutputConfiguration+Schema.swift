import AgentBase
import JSONSchema

extension OutputConfiguration {
    /// The JSON Schema (draft 2020-12) of ONE output object, for the settings schema's
    /// `"outputs": {"type": "array", "items": OutputConfiguration.schema}`.
    ///
    /// A self-contained fragment: no `$id`, `$schema` or `$ref`, so it can be embedded
    /// anywhere. The `type` selects, through `if`/`then`, the keys that output accepts
    /// (`additionalProperties: false` in each branch, so a typo is reported against the right
    /// type), with defaults and descriptions.
    public static let schema: JSONValue = [
        "type": "object",
        "description": "An output: events and messages also sent as JSON to stdout, a file or a webhook.",
        "required": ["type"],
        "properties": [
            "type": [
                "enum": ["stdout", "file", "webhook"],
                "description": "stdout: JSON lines to standard output; file: JSON lines to a file rotated by size; webhook: batches POSTed as JSON arrays.",
            ],
        ],
        "allOf": [
            branch("stdout", required: [], properties: []),
            branch("file", required: ["path"], properties: fileProperties),
            branch("webhook", required: ["url"], properties: webhookProperties),
        ],
    ]

    private static func branch(_ type: String, required: [JSONValue], properties: [(String, JSONValue)]) -> JSONValue {
        [
            "if": ["properties": ["type": ["const": .string(type)]], "required": ["type"]],
            "then": [
                "required": .array(required),
                "properties": .object(JSONObject(commonProperties + properties)),
                "additionalProperties": false,
            ],
        ]
    }

    private static var commonProperties: [(String, JSONValue)] {
        [
            ("type", ["type": "string"]),
            ("name", ["type": "string", "minLength": 1, "description": "Name in status and logs (default: the type and its path or URL)."]),
            ("kinds", [
                "type": "array", "items": ["enum": ["event", "message"]], "minItems": 1, "uniqueItems": true,
                "default": ["event", "message"], "description": "Which records this output receives.",
            ]),
            ("buffer", [
                "type": "integer", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.largestOutputBuffer), "default": .number(JSONNumber(defaultBuffer)),
                "description": "Records that may wait for this output; when full, the oldest is dropped and counted.",
            ]),
            ("buffer_bytes", [
                "type": "integer", "minimum": 65536, "maximum": SettingsBounds.json(SettingsBounds.largestOutputBufferBytes),
                "default": .number(JSONNumber(defaultBufferBytes)),
                "description": "Bytes the records waiting for this output may hold (payloads and texts); past them, the oldest are dropped and counted.",
            ]),
        ]
    }

    private static var fileProperties: [(String, JSONValue)] {
        [
            ("path", ["type": "string", "minLength": 1, "description": "The file (relative to the agent's folder); its folder is created."]),
            ("max_bytes", [
                "type": "integer", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.largestFileBytes), "default": 10_485_760,
                "description": "Size at which the file is rotated: path → path.1 → … → path.<keep>.",
            ]),
            ("keep", ["type": "integer", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.mostRotatedFiles), "default": 5, "description": "Rotated files kept; the oldest beyond is removed."]),
        ]
    }

    private static var webhookProperties: [(String, JSONValue)] {
        [
            ("url", [
                "type": "string", "pattern": "^(https?://|\\$\\{env:)",
                "description": "http:// or https:// URL to POST to; ${env:NAME} is replaced by the environment variable.",
            ]),
            ("batch_size", ["type": "integer", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.largestBatch), "default": 100, "description": "Records per POST at most; a full batch is sent at once."]),
            ("batch_interval", [
                "type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 1,
                "description": "Seconds a record waits for its batch to fill before it is sent anyway.",
            ]),
            ("timeout", ["type": "number", "exclusiveMinimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 5, "description": "Seconds before an attempt is abandoned."]),
            ("max_retries", [
                "type": "integer", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.mostRetries), "default": 5,
                "description": "Retries of a failed batch (connection error, timeout, non-2xx) before it is dropped and counted.",
            ]),
            ("retry_initial_delay", ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 0.5, "description": "Seconds before the first retry; doubles with each retry."]),
            ("retry_max_delay", ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 30, "description": "Cap on the delay between retries, in seconds."]),
            ("headers", [
                "type": "object", "additionalProperties": ["type": "string"], "default": [:],
                "propertyNames": ["pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"],
                "description": "Extra request headers; ${env:NAME} in values is replaced by the environment variable.",
            ]),
        ]
    }
}
