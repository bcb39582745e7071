import AgentCore
import AgentSupervision
import Foundation
import JSONSchema

/// Figure 1: loading a module — in a fresh process, as a worker does — and learning its
/// manifest through a worker, as the supervisor does.
enum ModuleLoadBench {
    static func run(_ environment: BenchEnvironment) -> Section {
        var section = Section(
            number: 1, title: "Module load",
            method: "load = ModuleLoader.load (stat, ELF header check, dlopen RTLD_NOW, ABI version and struct size check, manifest JSON decoded) timed inside a fresh `agent-bench --child load` process per repetition, the whole manifest as a describe worker reads it; as a worker loads it = the same with the manifest deferred (agent_module_defer_manifest called before the entry: the SDK builds no type's settings schema and gives the types and kinds alone; the worker builds its one type's schema later, when its process is made, which this row does not include — figure 3's start → ready does); describe = ModuleDescriber.describe of one module with an empty cache: posix_spawn of agent-worker --describe, dlopen there, manifest frame back over the socketpair, waitpid — what agent-control does per module at launch.")
        let repetitions = environment.quick ? 5 : 15
        let locator = ModuleLocator(agentDirectory: environment.scratch, configuration: "release", searchPath: [], runtimeDirectory: environment.binDirectory)
        for module in BenchEnvironment.shippedModules {
            var load = Samples()
            var deferredLoad = Samples()
            var describe = Samples()
            do {
                let path = environment.library(module)
                for _ in 0..<repetitions {
                    let line = try ChildRunner.run(environment, ["load", path, module])
                    guard let nanoseconds = (try? JSONValue.parse(line))?["nanoseconds"]?.numberValue?.intValue else {
                        throw BenchError("unexpected output from the load child: \(line)")
                    }
                    load.append(Double(nanoseconds) / 1e6)
                    let deferredLine = try ChildRunner.run(environment, ["load", path, module, "deferred"])
                    guard let deferredNanoseconds = (try? JSONValue.parse(deferredLine))?["nanoseconds"]?.numberValue?.intValue else {
                        throw BenchError("unexpected output from the load child: \(deferredLine)")
                    }
                    deferredLoad.append(Double(deferredNanoseconds) / 1e6)
                }
                let location = try locator.locate(module)
                for _ in 0..<repetitions {
                    let describer = ModuleDescriber(workerPath: environment.agentWorker)
                    var errors: [ModuleLoadError] = []
                    describe.append(Clock.milliseconds { errors = describer.describeAll([location]).errors })
                    if let error = errors.first { throw BenchError("describe \(module): \(error)") }
                }
                let size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int).map { " (\($0 / 1024) KiB)" } ?? ""
                section.add(Figure("load lib\(module).so\(size)", .milliseconds, samples: load))
                section.add(Figure("  lib\(module).so as a worker loads it (manifest deferred)", .milliseconds, samples: deferredLoad))
                section.add(Figure("describe \(module) through agent-worker", .milliseconds, samples: describe))
            } catch {
                section.fail("\(module): \(error)")
            }
        }
        return section
    }
}
