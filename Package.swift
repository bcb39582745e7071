// swift-tools-version: 6.0
import PackageDescription

/// Settings shared by every Swift target: Swift 6 language mode everywhere.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Modules this repository ships. Each builds as a shared library `lib<name>.so` that the
/// host loads with dlopen. `add-agent-module` inserts new entries between the markers.
let shippedModules: [(name: String, target: String)] = [
    // agent-modules:begin
    ("system", "SystemModule"),
    ("sample", "SampleModule"),
    // agent-modules:end
]

let package = Package(
    name: "AgentRuntime",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AgentModuleKit", targets: ["AgentModuleKit"]),
        .library(name: "AgentRuntime", targets: ["AgentRuntime"]),
        .library(name: "JSONSchema", targets: ["JSONSchema"]),
        .executable(name: "agent-control", targets: ["agent-control"]),
        .executable(name: "agent-worker", targets: ["agent-worker"]),
    ] + shippedModules.map { .library(name: $0.name, type: .dynamic, targets: [$0.target]) },
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .target(name: "AgentModuleABI"),
        .target(name: "CAgentSystem"),
        .target(name: "JSONSchema", swiftSettings: swiftSettings),
        .target(
            name: "AgentModuleKit",
            dependencies: ["AgentModuleABI"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AgentRuntime",
            dependencies: [
                "AgentModuleABI", "CAgentSystem", "JSONSchema",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "agent-control",
            dependencies: [
                "AgentRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "agent-worker",
            dependencies: ["AgentRuntime"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "JSONSchemaTests",
            dependencies: ["JSONSchema"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AgentModuleKitTests",
            dependencies: ["AgentModuleKit", "AgentModuleABI"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AgentRuntimeTests",
            dependencies: ["AgentRuntime", "AgentModuleKit", "agent-control", "agent-worker"],
            swiftSettings: swiftSettings
        ),
    ] + shippedModules.map {
        .target(
            name: $0.target,
            dependencies: ["AgentModuleKit"],
            path: "modules/\($0.name)/Sources",
            swiftSettings: swiftSettings
        )
    }
)
