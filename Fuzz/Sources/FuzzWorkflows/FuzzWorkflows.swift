@testable import AgentWork
import Foundation
import JSONSchema
@testable import AgentRuntime

/// The workflow validator on arbitrary definitions: the input is the settings' `"workflows"`
/// (name → definition), read beside fixed tasks, a chatbot and HTTP users as the settings
/// reader reads them (steps, references, limits, trigger cycles), then checked against the
/// tasks. Properties: no trap and no stall (one input's validation within `cpuBudget` seconds
/// of CPU); every problem is at a pointer whose parent is in the document; a workflow found
/// valid has no problem under its pointer, and reads back from its own definition as a run's
/// copy is read after a restart.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWorkflows(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let workflows = try? JSONValue.parse(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    let started = cpuSeconds()
    var document = base
    document["workflows"] = workflows
    let json = JSONValue.object(document)
    let settings = AgentSettings(json: json, file: "/fuzz/settings.json")
    let checked = WorkflowSettings.check(settings.workflows, drafts: settings.workflowDrafts, tasks: settings.tasks,
                                         definedTasks: Set(settings.tasks.map(\.name)))
    let pointers = settings.hostIssues.map(\.pointer) + checked.issues.map(\.pointer)
    for pointer in pointers where pointer.hasPrefix("/workflows") {
        guard let parsed = JSONPointer(pointer), parsed.tokens.isEmpty || JSONPointer(tokens: parsed.tokens.dropLast()).resolve(in: json) != nil else {
            fatalError("a problem at \(pointer), which is not in \(workflows.serialized())")
        }
    }
    for workflow in checked.valid {
        let at = "/workflows/" + JSONPointer.escape(workflow.name)
        guard !pointers.contains(where: { $0 == at || $0.hasPrefix(at + "/") }) else {
            fatalError("\(workflow.name) is valid with problems at \(pointers)")
        }
        guard WorkflowSettings.parse(name: workflow.name, source: workflow.source) != nil else {
            fatalError("\(workflow.name) is valid but does not read back from its definition \(workflow.source.serialized())")
        }
    }
    let spent = cpuSeconds() - started
    guard spent < cpuBudget else { fatalError("validating \(size) bytes of workflows took \(spent) s of CPU") }
    return 0
}

/// What one input may cost (ASan makes the validator a few times slower than a release build).
let cpuBudget = 2.0

func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Tasks for task steps (one with an input schema, one with an `on_event` that a publish step
/// can reach), a chatbot with logic adapters, users and a token for approvals.
let base: JSONObject = try! JSONValue.parse(#"""
{"tasks": {
   "job": {"type": "command", "command": ["/bin/true"], "input": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}, "required": ["n"]}},
   "listen": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "order.placed"}}},
 "processes": {"bot": {"type": "chatbot", "logic_adapters": ["features", "status"]}},
 "http": {"listen": "127.0.0.1:0", "users": {"alice": {"role": "admin", "password_hash": "$2b$12$abcdefghijklmnopqrstuuN1O1lE0XxU8Q0ZbmZ5b3w2vU1e3q8hK"}},
          "tokens": [{"name": "ci", "role": "read", "token": "${env:FUZZ_TOKEN}"}]}}
"""#).objectValue!
