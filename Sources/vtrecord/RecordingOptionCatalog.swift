import ArgumentParser
import Foundation

/// The recording command's options as swift-argument-parser itself describes them (its help
/// dump), so that preset keys are exactly the long options of the command line and a new
/// option is a preset key without anyone listing it twice.
struct RecordingOptionCatalog: Sendable {
    enum Kind: Sendable, Equatable {
        /// `--size 1280x720`
        case option
        /// `--control a=1 --control b=2`
        case repeating
        /// `--test-pattern`
        case flag
        /// `--reconnect` / `--no-reconnect`
        case invertibleFlag
    }

    struct Option: Sendable {
        let name: String
        /// `o` for `-o`.
        let shortName: String?
        let kind: Kind
        /// What the value is called in --help ("WxH", "rate").
        let valueName: String?
        /// The --help section ("Input", "Encoding").
        let section: String?
        /// The default as --help shows it, where the parser knows one.
        let defaultValue: String?
    }

    /// In the order the command declares them.
    let options: [Option]

    /// Options that make no sense in a preset: they are about this invocation, not a setting.
    static let excluded: Set<String> = ["help", "version", "preset"]

    /// Options that were flags once and still take true and false, so older presets keep
    /// working: `realtime = true` is adaptive, `false` is off.
    static let formerFlags: Set<String> = ["realtime"]

    /// Options that took one value once and may now be repeated: a string is still one value,
    /// so older presets keep working (`output = "x.mp4"`, and `output = ["x.mp4", "srt://…"]`).
    static let formerScalars: Set<String> = ["output"]

    func option(_ key: String) -> Option? { options.first { $0.name == key } }
    /// The option a one-letter name (`o` for `-o`) stands for.
    func option(shortName: String) -> Option? { options.first { $0.shortName == shortName } }

    var keys: [String] { options.map(\.name) }

    /// Built once from the command's own description.
    static let shared: RecordingOptionCatalog = {
        var dump = ""
        do {
            _ = try Record.parseAsRoot(["--experimental-dump-help"])
        } catch {
            dump = Record.fullMessage(for: error)
        }
        // The dump is produced by the parser from the command's declarations, in the schema
        // its ArgumentParserToolInfo module versions (that module is not a product of the
        // package, so it cannot be imported; `HelpDump` reads the fields used here by the
        // names ToolInfoV0 gives them). Another schema version is a build against a parser
        // this code was not written for, caught by the test suite before any user runs it.
        let data = Data(dump.utf8)
        let version = (try? JSONDecoder().decode(HelpDump.Header.self, from: data))?.serializationVersion
        guard version == HelpDump.serializationVersion,
              let info = try? JSONDecoder().decode(HelpDump.self, from: data) else {
            preconditionFailure("swift-argument-parser's help dump is in schema version \(version.map(String.init) ?? "unknown"), "
                                + "not \(HelpDump.serializationVersion): RecordingOptionCatalog must be updated with the parser")
        }
        return RecordingOptionCatalog(arguments: info.command.arguments ?? [])
    }()

    init(arguments: [HelpDump.Argument]) {
        let longNames = Set(arguments.compactMap(\.longName))
        var options: [Option] = []
        for argument in arguments {
            guard let name = argument.longName, !Self.excluded.contains(name) else { continue }
            let kind: Kind
            switch argument.kind {
            case "flag":
                // The "no-" half of an inversion is the same key set to false.
                if name.hasPrefix("no-") && longNames.contains(String(name.dropFirst(3))) { continue }
                kind = longNames.contains("no-\(name)") ? .invertibleFlag : .flag
            case "option":
                kind = argument.isRepeating == true ? .repeating : .option
            default:
                continue
            }
            options.append(Option(name: name, shortName: argument.names?.first { $0.kind == "short" }?.name, kind: kind, valueName: argument.valueName, section: argument.sectionTitle,
                                  defaultValue: argument.defaultValue))
        }
        self.options = options
    }

    /// The part of swift-argument-parser's `--experimental-dump-help` JSON (its `ToolInfoV0`)
    /// that is read here.
    struct HelpDump: Decodable {
        /// The ToolInfo schema these fields are from.
        static let serializationVersion = 0

        /// `ToolInfoHeader`: which schema the rest is in.
        struct Header: Decodable {
            let serializationVersion: Int
        }

        struct Name: Decodable {
            let kind: String
            let name: String
        }

        struct Argument: Decodable {
            let kind: String
            let names: [Name]?
            let isRepeating: Bool?
            let valueName: String?
            let sectionTitle: String?
            let defaultValue: String?

            var longName: String? { names?.first { $0.kind == "long" }?.name }
        }

        struct Command: Decodable {
            let arguments: [Argument]?
        }

        let command: Command
    }
}
