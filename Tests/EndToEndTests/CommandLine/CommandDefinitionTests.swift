import AgentTestSupport
@testable import ArgumentParser
@testable import add_agent_module
@testable import AgentControlCLI
@testable import create_agent
import Foundation
import Testing
@testable import validate_settings

/// ArgumentParser checks a command's definition (unique names, positional arguments in an order
/// that can be parsed, flags that make sense, coding keys) only in a debug build of itself, and
/// then on every parse. CI builds it without that condition (scripts/ci/swiftc: the ~1,700
/// commands the tests run took twice as long with it), so the definition checks run here, once,
/// for every command of every tool and every option group in them. (Its debug build's other
/// checks, of async commands and custom completions, concern nothing these tools have.)
@Suite(.ownThreads) struct CommandDefinitionTests {
    /// Runs ArgumentParser's validators on `type` and on each option group in it; the errors
    /// name the type and what is wrong. Returns how many types it checked.
    private static func validate(_ type: any ParsableArguments.Type, parent: InputKey?) throws -> Int {
        try type._validate(parent: parent)
        var checked = 1
        for child in Mirror(reflecting: type.init()).children {
            guard let label = child.label, let group = Swift.type(of: child.value) as? any GroupedArguments.Type else { continue }
            checked += try validate(group.arguments, parent: InputKey(name: label, parent: parent))
        }
        return checked
    }

    /// Validates `command`, then each of its subcommands, depth first; returns the commands' paths.
    private static func validateTree(_ command: any ParsableCommand.Type, path: [String] = []) throws -> [String] {
        let here = path + [command._commandName]
        _ = try validate(command, parent: nil)
        return try command.configuration.subcommands.reduce(into: [here.joined(separator: " ")]) { paths, subcommand in
            paths += try validateTree(subcommand, path: here)
        }
    }

    @Test func everyCommandOfEveryToolPassesArgumentParsersOwnChecks() throws {
        let control = try Self.validateTree(AgentControl.self)
        // The walk reached the deep commands, not the root only.
        #expect(control.contains("agent-control task run"), "\(control)")
        #expect(control.count > 40, "\(control)")
        for tool in [ValidateSettings.self, CreateAgent.self, AddAgentModule.self] as [any ParsableCommand.Type] {
            #expect(try Self.validateTree(tool) == [tool._commandName])
        }
        // The walk looks into option groups: console has two.
        #expect(try Self.validate(Console.self, parent: nil) >= 3)
    }

    /// A definition ArgumentParser refuses is refused: two options of one name, in the command
    /// or in an option group of it, and positional arguments that cannot be told apart inside a
    /// group (a check that runs on the group alone: only the walk into groups finds it). In a
    /// process of its own: where ArgumentParser is built with DEBUG (a plain `swift build`),
    /// its own check ends the process with status 1 at the first look; without (CI), the walk
    /// throws, and the process exits 1 for it.
    @Test func aDefinitionArgumentParserRefusesIsRefused() async {
        await #expect(processExitsWith: .exitCode(EXIT_FAILURE)) {
            do { _ = try Self.validateTree(TwoOptionsOfOneName.self) } catch { exit(EXIT_FAILURE) }
        }
        await #expect(processExitsWith: .exitCode(EXIT_FAILURE)) {
            do { _ = try Self.validateTree(AGroupWithAClashingName.self) } catch { exit(EXIT_FAILURE) }
        }
        await #expect(processExitsWith: .exitCode(EXIT_FAILURE)) {
            do { _ = try Self.validateTree(AGroupWithPositionalsInAnOrderNoParseCanTake.self) } catch { exit(EXIT_FAILURE) }
        }
    }
}

/// Lets the walk find the type an `@OptionGroup` holds.
private protocol GroupedArguments { static var arguments: any ParsableArguments.Type { get } }

extension OptionGroup: GroupedArguments {
    static var arguments: any ParsableArguments.Type { Value.self }
}

private struct TwoOptionsOfOneName: ParsableCommand {
    @Option(name: .customLong("name")) var first = ""
    @Option(name: .customLong("name")) var second = ""
}

private struct TwoNamesInAGroup: ParsableArguments {
    @Option(name: .customLong("name")) var name = ""
    @Option(name: .customLong("name")) var again = ""
}

/// The clash is inside an option group of the command.
private struct AGroupWithAClashingName: ParsableCommand {
    @OptionGroup var group: TwoNamesInAGroup
}

/// An array positional before another positional, inside a group.
private struct PositionalsInAnOrderNoParseCanTake: ParsableArguments {
    @Argument var many: [String] = []
    @Argument var last: String
}

private struct AGroupWithPositionalsInAnOrderNoParseCanTake: ParsableCommand {
    @OptionGroup var group: PositionalsInAnOrderNoParseCanTake
}
