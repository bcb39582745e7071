import AgentCore
import AgentRuntime
import AgentSupervision
import Foundation
import JSONSchema

/// Figure 2: validating a large settings file end to end, and its parts.
enum SettingsBench {
    static let processCount = 1000

    static func run(_ environment: BenchEnvironment) -> Section {
        var section = Section(
            number: 2, title: "Settings validation (\(processCount) processes)",
            method: "a generated settings.json with \(processCount) processes of 6 process types of the shipped modules (realistic settings, restart policies on a quarter, a tenth disabled), all valid. end to end = AgentSettings.load (read, JSONValue.parse, host schema) + SettingsValidator.check (each type's schema compiled once, every process validated with JSONSchemaValidator, defaults applied, plan) — what agent-control does after describing the modules (manifests learnt beforehand). The rows below it time the parts alone.")
        let repetitions = environment.quick ? 5 : 20
        do {
            let text = GeneratedSettings.large(processes: processCount)
            let file = try environment.writeAgent("settings-\(processCount)", settings: text)
            let locator = ModuleLocator(agentDirectory: environment.scratch, configuration: "release", searchPath: [], runtimeDirectory: environment.binDirectory)
            let (modules, locateErrors) = locator.locateAll(BenchEnvironment.shippedModules)
            let (manifests, describeErrors) = ModuleDescriber(workerPath: environment.agentWorker).describeAll(modules)
            if let error = (locateErrors + describeErrors).first { throw BenchError("\(error)") }

            var endToEnd = Samples()
            var planned = 0
            for _ in 0..<repetitions {
                var report: SettingsReport?
                endToEnd.append(try Clock.milliseconds {
                    let settings = try AgentSettings.load(file: file)
                    var validator = SettingsValidator()
                    report = validator.check(settings, modules: modules, manifests: manifests)
                })
                guard let report, report.isValid else {
                    throw BenchError("the generated settings are invalid: \(report?.blockingIssues.prefix(3).map { "\($0)" }.joined(separator: "; ") ?? "")")
                }
                planned = report.planned.count
            }
            section.add(Figure("end to end: load + validate + plan", .milliseconds, samples: endToEnd,
                               note: "\(planned) planned, \(text.utf8.count / 1024) KiB"))

            let bytes = Array(text.utf8)
            var parse = Samples()
            var document = JSONValue.null
            for _ in 0..<repetitions { parse.append(try Clock.milliseconds { document = try JSONValue.parse(bytes) }) }
            section.add(Figure("JSONValue.parse alone", .milliseconds, samples: parse))

            var host = Samples()
            var settings: AgentSettings?
            for _ in 0..<repetitions { host.append(Clock.milliseconds { settings = AgentSettings(json: document, file: file) }) }
            section.add(Figure("host schema + process entries (AgentSettings)", .milliseconds, samples: host))

            let types = Dictionary(manifests.values.flatMap(\.processes).map { ($0.type, $0.settingsSchema) }) { first, _ in first }
            var compile = Samples()
            var validators: [String: JSONSchemaValidator] = [:]
            for _ in 0..<repetitions {
                compile.append(try Clock.milliseconds {
                    validators = try types.mapValues { try JSONSchemaValidator(schema: $0) }
                })
            }
            section.add(Figure("compile the \(types.count) type schemas", .milliseconds, samples: compile))

            let instances = (settings?.processes ?? []).compactMap { process in
                validators[process.type].map { ($0, JSONValue.object(process.moduleSettings)) }
            }
            guard instances.count == processCount else { throw BenchError("only \(instances.count) processes have a known type") }
            var validate = Samples()
            var errors = 0
            for _ in 0..<repetitions {
                validate.append(Clock.milliseconds {
                    for (validator, instance) in instances { errors += validator.validate(instance).count }
                })
            }
            if errors > 0 { section.fail("JSONSchemaValidator found \(errors) errors in valid settings") }
            section.add(Figure("JSONSchemaValidator.validate alone, \(processCount) processes", .milliseconds, samples: validate,
                               note: String(format: "%.1f µs per process", validate.median * 1000 / Double(processCount))))
        } catch {
            section.fail("\(error)")
        }
        return section
    }
}
