// swift-tools-version: 6.0
import PackageDescription

/// The AgentRuntime SDK: the module ABI (a C header) and AgentModuleKit, the Swift SDK for
/// module authors. A package of its own, with no dependencies, so that agents build their
/// modules against it quickly and offline (`.package(path: "<runtime>/SDK")`). Its tests are
/// in the runtime's package (Tests/AgentModuleKitTests), so that `swift test` there runs them.
let package = Package(
    name: "SDK",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AgentModuleKit", targets: ["AgentModuleKit"]),
        .library(name: "AgentModuleABI", targets: ["AgentModuleABI"]),
        // The host uses it too (its own threads' stacks), so that the code is written once.
        .library(name: "CAgentModuleKit", targets: ["CAgentModuleKit"]),
    ],
    targets: [
        .target(name: "AgentModuleABI"),
        // What AgentModuleKit needs from the C library that Swift's Glibc does not import.
        .target(name: "CAgentModuleKit"),
        .target(
            name: "AgentModuleKit",
            dependencies: ["AgentModuleABI", "CAgentModuleKit"],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
