import AgentCore
@testable import AgentSupervision
import Foundation
import JSONSchema
@testable import AgentRuntime

/// The settings reader on arbitrary settings files: the host schema, `${env:NAME}`
/// references, a module's schema with defaults, the report. Nothing is loaded or started;
/// the module's manifest is a fixed one with the shapes real modules use.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSettings(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let document = try? JSONValue.parse(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    let settings = AgentSettings(json: document, file: "/fuzz/settings.json")
    _ = try? settings.checkHostLayer()
    var validator = SettingsValidator()
    let report = validator.check(settings, modules: [fixture.location], manifests: [fixture.location.name: fixture.manifest])
    _ = report.text
    _ = report.json.serialized()
    return 0
}

/// A module with a datasource (patterns, formats, defaults, nested objects), a monitor with a
/// periodic query whose period and window come from its settings, and a logic adapter.
let fixture: (location: ModuleLocation, manifest: ModuleManifest) = {
    setenv("FUZZ_TOKEN", "S3CR3T", 1)
    setenv("FUZZ_EMPTY", "", 1)
    setenv("FUZZ_NUMBER", "42", 1)
    let manifest = #"""
    {"name": "fuzzmod", "version": "1.0.0", "processes": [
      {"type": "feed", "kind": "datasource", "settings_schema": {"type": "object", "additionalProperties": false,
        "properties": {
          "pairs": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{2,5}/[A-Z]{2,5}$"}, "default": ["ETH/USD"], "uniqueItems": true},
          "interval": {"type": "number", "minimum": 0.001, "default": 1},
          "token": {"type": "string", "minLength": 1},
          "url": {"type": "string", "format": "uri"},
          "mode": {"enum": ["fast", "slow", 3, null]},
          "nested": {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                     "count": {"type": "integer", "maximum": 100, "default": 5}}, "required": ["when"]}}}},
      {"type": "watch", "kind": "monitor", "subscribes": ["trade"], "settings_schema": {"type": "object",
        "properties": {"every": {"type": "number", "default": 10}, "window": {"type": "number", "default": 60},
                       "key": {"type": "string", "default": "pair"}}},
       "queries": [{"name": "counts", "sql": "SELECT count(*) AS n FROM events WHERE time >= :since", "every": "$every", "window": "$window"}]},
      {"type": "answer", "kind": "logic_adapter", "settings_schema": {"type": "object"}}]}
    """#
    let parsed = try! ModuleManifest(json: manifest, module: "fuzzmod", file: "/fuzz/libfuzzmod.so")
    return (ModuleLocation(name: "fuzzmod", library: "/fuzz/libfuzzmod.so", sourceDirectory: nil), parsed)
}()
