import Foundation

/// The commands and options of the built binary, read from swift-argument-parser's
/// `--experimental-dump-help` (the JSON it also builds completion scripts from), so the
/// documentation checks see exactly what the parser accepts.
struct CommandTree {
    struct Command {
        /// The words after `vtrecord`: `[]` for the recording command (also `["record"]`), `["devices"]`,
        /// `["presets", "list"]`.
        var path: [String]
        /// Every name an option or flag answers to, spelled as typed: `--output`, `-o`.
        var options: Set<String>
        /// The options documentation must describe: `options` less what the parser adds to
        /// every command by itself (`--help`, `-h`, `--version`, described once, for the root)
        /// and options hidden from `--help`.
        var documentedOptions: Set<String>
        /// Whether it has subcommands (`presets`); such a command may be only a name for them.
        var hasSubcommands: Bool
        /// Names that more than one of its options answer to (swift-argument-parser refuses
        /// them only in a build that defines DEBUG, which the tests' build does not).
        var sharedNames: [String] = []

        var name: String { (["vtrecord"] + path).joined(separator: " ") }
    }

    /// Every command, the root first, then subcommands depth first. The `help` command the
    /// parser adds is left out.
    let commands: [Command]

    var root: Command { commands[0] }

    /// Every option name of every command.
    var allOptions: Set<String> { commands.reduce(into: []) { $0.formUnion($1.options) } }

    static let parserOptions: Set<String> = ["--help", "-h", "--version"]

    init(dumpHelpJSON data: Data) throws {
        let info = try JSONDecoder().decode(ToolInfo.self, from: data)
        var commands: [Command] = []
        func walk(_ command: ToolInfo.Command, path: [String]) {
            var options: Set<String> = []
            var documented: Set<String> = []
            var shared: [String] = []
            for argument in command.arguments ?? [] where argument.kind != "positional" {
                let names = (argument.names ?? []).map(\.spelling)
                shared += names.filter { options.contains($0) }
                options.formUnion(names)
                if argument.shouldDisplay { documented.formUnion(names) }
            }
            if !path.isEmpty { documented.subtract(Self.parserOptions) }
            let subcommands = (command.subcommands ?? []).filter { $0.commandName != "help" }
            commands.append(Command(path: path, options: options, documentedOptions: documented,
                                    hasSubcommands: !subcommands.isEmpty, sharedNames: shared))
            for sub in subcommands {
                walk(sub, path: path + [sub.commandName])
            }
        }
        walk(info.command, path: [])
        // The default subcommand (`record`) is what `vtrecord` alone runs: its options are the
        // root's too, documented once, under the root (the man page's OPTIONS).
        if let name = info.command.defaultSubcommand,
           let index = commands.firstIndex(where: { $0.path == [name] }) {
            commands[0].options.formUnion(commands[index].options)
            commands[0].documentedOptions.formUnion(commands[index].documentedOptions)
            commands[index].documentedOptions = []
        }
        self.commands = commands
    }

    /// The tree of the vtrecord binary the tests run.
    static func ofBuiltBinary() throws -> CommandTree {
        let r = try Tools.vtrecord(["--experimental-dump-help"])
        guard r.status == 0 else {
            throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "--experimental-dump-help: exit \(r.status): \(r.stderr)"])
        }
        return try CommandTree(dumpHelpJSON: r.stdout)
    }
}

/// The part of swift-argument-parser's ToolInfoV0 the documentation checks read.
private struct ToolInfo: Decodable {
    struct Command: Decodable {
        var commandName: String
        var defaultSubcommand: String?
        var arguments: [Argument]?
        var subcommands: [Command]?
    }

    struct Argument: Decodable {
        /// "option", "flag" or "positional".
        var kind: String
        var names: [Name]?
        var shouldDisplay: Bool
    }

    struct Name: Decodable {
        /// "long", "short" or "longWithSingleDash".
        var kind: String
        var name: String

        var spelling: String { kind == "long" ? "--\(name)" : "-\(name)" }
    }

    var command: Command
}
