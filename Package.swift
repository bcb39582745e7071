// swift-tools-version: 6.1
import PackageDescription

/// Settings shared by every Swift target: Swift 6 language mode everywhere.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Modules this repository ships. Each builds as a shared library `lib<name>.so` that the
/// host loads with dlopen.
let shippedModules: [(name: String, target: String)] = [
    // agent-modules:begin
    ("system", "SystemModule"),
    ("sample", "SampleModule"),
    ("faults", "FaultsModule"),
    ("bench", "BenchModule"),
    // agent-modules:end
]

/// AgentFleet (and with it postgres-nio, swift-crypto and its second BoringSSL) only where the
/// trait `Fleet` is on: on by default, so `swift build`, `swift test`, CI and the Debian package
/// build everything; `swift build --disable-default-traits` builds an agent-control without the
/// fleet, about a third fewer compile steps for a first build (see the README's quick start).
let fleet: TargetDependencyCondition? = .when(traits: ["Fleet"])

/// The runtime's layer targets, low to high (issue 35; scripts/split/layers.txt).
let layerTargets: [String] = [
    "AgentBase", "AgentLoop", "AgentOutputs", "AgentSupervision", "AgentWork", "AgentStore", "AgentCommands", "AgentRuntime",
]

/// One test target per library (issue 35), each depending on what it tests (and what that
/// library's tests read besides, e.g. the store a feature's runs are written to) and on
/// AgentTestSupport, so that a change to a layer rebuilds only the tests of it and the layers
/// above. `EndToEndTests` drives the built binaries (agent-control, the packaging, the command
/// line); the other targets start real agents too where that is what they test.
let testTargets: [Target] = [
    ("AgentCoreTests", ["AgentCore", "CAgentSystem", "AgentBase"]),
    ("AgentBaseTests", ["AgentBase", "AgentCore"]),
    ("AgentSupervisionTests", ["AgentSupervision", "AgentLoop", "AgentBase", "AgentCore", "CAgentSystem"]),
    ("AgentOutputsTests", ["AgentOutputs", "AgentBase", "AgentCore"]),
    // GRDB: the tests that check what reached the store read its file (the layer itself has no store).
    ("AgentWorkTests", ["AgentWork", "AgentSupervision", "AgentOutputs", "AgentLoop", "AgentBase", "AgentCore", .product(name: "GRDB", package: "GRDB.swift")]),
    ("AgentStoreTests", ["AgentStore", "AgentStoreConformance", "AgentWork", "AgentSupervision", "AgentOutputs", "AgentLoop", "AgentBase", "AgentCore"]),
    ("AgentCommandsTests", ["AgentCommands", "AgentStore", "AgentWork", "AgentLoop", "AgentBase", "AgentCore"]),
    // The composition root: the supervisor in-process, the whole settings file.
    ("AgentRuntimeTests", layerTargets.map { .target(name: $0) } + ["AgentCore", "CAgentSystem"]),
    ("AgentHTTPTests", ["AgentHTTP", "AgentCommands", "AgentWork", "AgentBase", "AgentCore"]),
    ("AgentFleetTests", [
        .target(name: "AgentFleet", condition: fleet), "AgentStoreConformance", "AgentStore", "AgentWork", "AgentSupervision", "AgentLoop", "AgentBase", "AgentCore",
    ]),
    ("AgentScaffoldingTests", ["AgentScaffolding"]),
    // The binaries it runs are built first (`swift build --build-tests` builds them all anyway).
    ("EndToEndTests", [
        "AgentBase", "AgentCore", "AgentVersion", .product(name: "GRDB", package: "GRDB.swift"),
        // agent-control's commands as a library: the executable target's static runtime
        // would be linked into the test bundle with it.
        "AgentControlCLI", "agent-worker", "validate-settings", "create-agent", "add-agent-module",
        // CommandDefinitionTests runs ArgumentParser's own checks of every command.
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
    ]),
].map { (name: String, dependencies: [Target.Dependency]) in
    .testTarget(
        name: name,
        dependencies: dependencies + [
            "AgentTestSupport", "JSONSchema", .product(name: "Logging", package: "swift-log"), .product(name: "AgentModuleABI", package: "SDK"),
        ],
        swiftSettings: swiftSettings
    )
}

let package = Package(
    name: "AgentRuntime",
    platforms: [.macOS(.v15)],
    products: [
        // The runtime with its layers (the fuzz harnesses import them).
        .library(name: "AgentRuntime", targets: layerTargets),
        .library(name: "AgentScaffolding", targets: ["AgentScaffolding"]),
        .library(name: "JSONSchema", targets: ["JSONSchema"]),
        .executable(name: "agent-control", targets: ["agent-control"]),
        .executable(name: "agent-worker", targets: ["agent-worker"]),
        .executable(name: "agent-bench", targets: ["agent-bench"]),
        .executable(name: "validate-settings", targets: ["validate-settings"]),
        .executable(name: "create-agent", targets: ["create-agent"]),
        .executable(name: "add-agent-module", targets: ["add-agent-module"]),
    ] + shippedModules.map { .library(name: $0.name, type: .dynamic, targets: [$0.target]) },
    traits: [
        .trait(name: "Fleet", description: "Agents on many hosts sharing runs and schedules on PostgreSQL (AgentFleet, postgres-nio)."),
        .default(enabledTraits: ["Fleet"]),
    ],
    dependencies: [
        // The module ABI and the Swift SDK: a package of their own that agents depend on.
        .package(path: "SDK"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Templates for create-agent and add-agent-module: a real template engine, rather
        // than strings assembled in code.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
        // The embedded store: SQLite (the system's libsqlite3) in WAL mode.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        // The HTTP front (API, dashboard, metrics): a maintained NIO server with routing,
        // request decoding, TLS and middleware, rather than an HTTP/1.1 parser of our own.
        // Linked by agent-control only; agent-worker links none of it.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        // Bcrypt password hashes for the dashboard's users.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        // GET /metrics: the standard metrics API with its Prometheus text exporter.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        // The fleet's shared store (issue 26): PostgreSQL's own wire protocol over NIO, with
        // a connection pool, TLS, LISTEN/NOTIFY and prepared statements; a proven client
        // rather than a protocol of our own. Linked by AgentFleet, and so by agent-control
        // only: agent-worker links none of it.
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        .target(name: "CAgentSystem"),
        .target(name: "AgentVersion", swiftSettings: swiftSettings),
        // ICU's regex C API with a step limit, for the few patterns the linear-time matcher
        // does not take (backreferences, lookaround): Foundation's own ICU, no other library.
        .target(
            name: "CPatternICU",
            linkerSettings: [.linkedLibrary("_FoundationICU", .when(platforms: [.linux]))]
        ),
        .target(
            name: "JSONSchema",
            dependencies: [.target(name: "CPatternICU", condition: .when(platforms: [.linux]))],
            swiftSettings: swiftSettings,
            // `Double.rounded()` calls libm's round, floor, …; JSONSchema imports no Foundation
            // (which linked libm for it), so a program that imports JSONSchema alone (the
            // FuzzJSON and FuzzSchema harnesses) links it here.
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]
        ),
        // What a worker needs: the wire protocol, the module loader, the worker's host side.
        .target(
            name: "AgentCore",
            dependencies: [.product(name: "AgentModuleABI", package: "SDK"), .product(name: "CAgentModuleKit", package: "SDK"), "AgentVersion", "CAgentSystem", "JSONSchema"],
            swiftSettings: swiftSettings
        ),
        // The host, in layers (issue 35): each target imports only the ones below it, so the
        // compiler holds the arrows. AgentBase < AgentLoop < AgentOutputs < AgentSupervision
        // < AgentWork < AgentStore < AgentCommands < AgentRuntime (scripts/split/layers.txt).
        // The vocabulary every layer shares: paths, console and log, settings' bounds and errors.
        .target(
            name: "AgentBase",
            dependencies: ["AgentCore", "CAgentSystem", "JSONSchema", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The supervisor's epoll loop: timers, the inbox, signals.
        .target(
            name: "AgentLoop",
            dependencies: ["AgentCore", "CAgentSystem"],
            swiftSettings: swiftSettings
        ),
        // Where events go out: files, sockets, HTTP, the journal.
        .target(
            name: "AgentOutputs",
            dependencies: ["AgentBase", "AgentCore", "CAgentSystem", "JSONSchema", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // Worker processes: spawn, restart, containment, cgroups, the fork server, modules.
        .target(
            name: "AgentSupervision",
            dependencies: ["AgentBase", "AgentLoop", "AgentCore", "CAgentSystem", "JSONSchema", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The work layer: tasks, executors, schedules, workflows, memory, notifications, each
        // feature's store protocol and records.
        .target(
            name: "AgentWork",
            dependencies: [
                "AgentBase", "AgentLoop", "AgentOutputs", "AgentSupervision", "AgentCore", "CAgentSystem", "JSONSchema",
                .product(name: "Logging", package: "swift-log"),
                // Task notification emails: subject and body templates.
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the store sets in SQLite that Swift cannot call (a variadic sqlite3_config).
        .target(name: "CAgentStore", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The embedded SQLite store: events, history, and each feature's store on SQLite.
        .target(
            name: "AgentStore",
            dependencies: [
                "AgentBase", "AgentSupervision", "AgentWork", "AgentCore", "CAgentStore", "JSONSchema",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The command layer every front uses: the catalog, the command centre, snapshots.
        .target(
            name: "AgentCommands",
            dependencies: [
                "AgentBase", "AgentLoop", "AgentOutputs", "AgentSupervision", "AgentWork", "AgentStore", "AgentCore", "JSONSchema",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The composition root: the supervisor, control, the settings file and its commands.
        .target(
            name: "AgentRuntime",
            dependencies: [
                "AgentBase", "AgentLoop", "AgentOutputs", "AgentSupervision", "AgentWork", "AgentStore", "AgentCommands",
                "AgentCore", "CAgentSystem", "JSONSchema",
                .product(name: "CAgentModuleKit", package: "SDK"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fleet: agents on many hosts sharing runs and schedules on PostgreSQL. Its own
        // target so that PostgresNIO stays out of everything but the supervisor's side.
        .target(
            name: "AgentFleet",
            dependencies: [
                "AgentBase", "AgentWork", "AgentSupervision", "JSONSchema",
                // `swift build` builds every target of this package: the condition keeps
                // postgres-nio out of a build without the trait (the sources are #if Fleet).
                .product(name: "PostgresNIO", package: "postgres-nio", condition: fleet),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AgentScaffolding",
            dependencies: ["JSONSchema", .product(name: "Mustache", package: "swift-mustache")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "create-agent",
            dependencies: ["AgentScaffolding", "AgentVersion", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "add-agent-module",
            dependencies: ["AgentScaffolding", "AgentVersion", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
        // What the command-line tools share.
        .target(
            name: "AgentCLI",
            dependencies: ["AgentRuntime", "AgentBase", "AgentVersion", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
        // The HTTP front: API, dashboard, metrics and health over the one command layer.
        .target(
            name: "AgentHTTP",
            dependencies: [
                "AgentCommands", "AgentWork", "AgentBase", "AgentCore", "AgentVersion", "JSONSchema",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // agent-control's command tree, a library of its own so that the tests that check it
        // (CommandDefinitionTests) link it without the executable's linker settings below.
        .target(
            name: "AgentControlCLI",
            dependencies: [
                "AgentRuntime", "AgentBase", "AgentWork", "AgentStore", "AgentCommands", "AgentCLI", "AgentVersion", "AgentHTTP", .target(name: "AgentFleet", condition: fleet),
                "AgentScaffolding", "JSONSchema",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // What agent-control does before the Swift runtime starts: name its crash backtracer's
        // helper (backtrace_helper.c).
        .target(name: "CAgentControl"),
        // The Swift runtime and Foundation linked statically: the dynamic loader's work on
        // them (their loads, relocations and symbol lookups) was ~5 ms of every launch and of
        // every command (issue 38, item 4). agent-worker stays dynamic: the modules it loads
        // with dlopen link the shared runtime, and a process may hold only one. lld, since the
        // objects here are compiled against the shared libraries' modules and name none of
        // the static archives' own dependencies, which lld finds in any order. Without
        // -export-dynamic (which -static-stdlib adds): 62,623 exported symbols made the
        // runtime's one dladdr at start scan them all; RELR packs the 153,346 relative
        // relocations (glibc ≥ 2.36).
        .executableTarget(
            name: "agent-control",
            dependencies: ["AgentControlCLI", "CAgentControl"],
            swiftSettings: swiftSettings,
            linkerSettings: [
                .unsafeFlags(
                    ["-static-stdlib", "-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-l_FoundationCShims", "-l_FoundationCollections", "-lCoreFoundation", "-lswiftSynchronization"],
                    .when(platforms: [.linux])
                ),
            ]
        ),
        .executableTarget(
            name: "validate-settings",
            dependencies: [
                "AgentCLI", "AgentVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "agent-worker",
            dependencies: ["AgentCore", "AgentVersion"],
            swiftSettings: swiftSettings
        ),
        // The bench's event payload and tally, shared by the bench module and agent-bench's
        // socketpair baseline, so that both measure the same way.
        .target(name: "BenchSupport", swiftSettings: swiftSettings),
        .executableTarget(
            name: "agent-bench",
            dependencies: [
                "AgentRuntime", "AgentBase", "AgentSupervision", "AgentWork", "AgentStore", "AgentCommands", "AgentCore", "AgentHTTP",
                .target(name: "AgentFleet", condition: fleet), "AgentVersion", "CAgentSystem", "JSONSchema", "BenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AgentBenchTests",
            dependencies: ["agent-bench", "AgentTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "JSONSchemaTests",
            dependencies: ["JSONSchema", "AgentTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AgentModuleKitTests",
            dependencies: [.product(name: "AgentModuleKit", package: "SDK"), .product(name: "AgentModuleABI", package: "SDK"), .product(name: "CAgentModuleKit", package: "SDK"), "AgentTestSupport"],
            swiftSettings: swiftSettings
        ),
        // Helpers the test targets share (the real agent as a child process, HTTP and control
        // clients, fixtures): a plain target that depends on no library of the runtime, so
        // that each test target takes only what it tests.
        .target(
            name: "AgentTestSupport",
            dependencies: ["CAgentSystem", "CAgentTestSupport", "JSONSchema", .product(name: "Logging", package: "swift-log")],
            path: "Tests/AgentTestSupport",
            swiftSettings: swiftSettings
        ),
        // Chooses the test process's TMPDIR before any thread starts: the system's, or another
        // folder when programs may not run from it (a noexec /tmp).
        .target(name: "CAgentTestSupport", path: "Tests/CAgentTestSupport"),
        // The contract of the work layer's store protocols, as checks each implementation's
        // tests run (AgentStoreTests: SQLite, AgentFleetTests: PostgreSQL). A target of its own,
        // not part of AgentTestSupport: that one depends on no runtime library, so that the
        // lower layers' tests do not rebuild when AgentWork changes.
        .target(
            name: "AgentStoreConformance",
            dependencies: ["AgentWork", "JSONSchema"],
            path: "Tests/AgentStoreConformance",
            swiftSettings: swiftSettings
        ),
    ] + testTargets + shippedModules.map {
        .target(
            name: $0.target,
            dependencies: [.product(name: "AgentModuleKit", package: "SDK")] + ($0.name == "bench" ? ["BenchSupport"] : []),
            path: "modules/\($0.name)/Sources",
            swiftSettings: swiftSettings
        )
    }
)
