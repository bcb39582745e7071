// swift-tools-version: 6.0
import PackageDescription

/// libFuzzer harnesses for the runtime's parsers, kept out of the main package so that a
/// normal `swift build` neither builds nor slows down for them. Built by `scripts/fuzz.sh`
/// (libFuzzer and ASan, see there why the flags are what they are); each harness is an
/// executable whose `main` is libFuzzer's and whose `LLVMFuzzerTestOneInput` is ours.
let harnesses: [(name: String, dependencies: [Target.Dependency])] = [
    ("FuzzJSON", [.product(name: "JSONSchema", package: "AgentRuntime")]),
    ("FuzzSchema", [.product(name: "JSONSchema", package: "AgentRuntime")]),
    ("FuzzSettings", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzFrames", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzRing", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzControl", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzHTTP", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzCommands", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzCron", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzWorkflows", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
    ("FuzzReferences", [.product(name: "AgentRuntime", package: "AgentRuntime")]),
]

let package = Package(
    name: "AgentRuntimeFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "AgentRuntime", path: "..")],
    targets: harnesses.map {
        .executableTarget(
            name: $0.name, dependencies: $0.dependencies,
            // No top-level code: libFuzzer provides main.
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        )
    }
)
