import ArgumentParser
import Logging
import VTCore
import VTEncoding
import VTRecorder

#if canImport(Glibc)
import Glibc
#endif

@main
struct VTRecord: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "vtrecord",
        abstract: "Record a camera, a Y4M stream or a test pattern to an H.264 file.",
        usage: """
            vtrecord [record] [--device <path> | --input <path> | --test-pattern] [--preset <name>…] [<options>] [-o <path>]
              vtrecord devices [--json]
              vtrecord formats [--device <path>] [--json]
              vtrecord controls [--device <path>] [--json]
              vtrecord encoders [--va-device <path>] [--json]
              vtrecord inspect [--json] <file>
              vtrecord remux <file> -o <path> [--timestamps <path>] [--fps <rate>]
              vtrecord verify [--json] [--decoder <decoder>] <file>…
              vtrecord thumbnail <file> [--at <times> | --every <time> | --count <n>] [--exact] [--size <WxH>] [--tile <CxR>] [-o <path>]
              vtrecord snapshot [--device <path>] [--size <WxH>] [--format <format>] [--skip <n>] [-o <path>]
              vtrecord presets list [--json]
              vtrecord presets show <name> [<options>]
              vtrecord batch [--json] <file.toml>
            """,
        discussion: """
            Frames go from the source through a bounded queue to the encoder (VA-API hardware \
            when a device can do the job, else libx264) and are \
            written as a raw H.264 elementary stream (Annex B) with SPS and PPS before every \
            keyframe, so every GOP plays on its own, or, by the -o extension or --container, \
            as MP4 (crash-safe while recording, finalized at a clean end), Matroska or MPEG-TS \
            with each frame's time.

            EXIT STATUS:
              0    success, including a clean stop by SIGINT or SIGTERM
              1    unexpected failure
              2    bad usage, bad option value, bad preset or unreadable input file
              3    capture device error (missing, busy, unsupported, unplugged)
              4    encoder error
              5    output error (cannot write, file exists, disk full, pipe closed)
              6    verify found a damaged file; remux left out frames of a damaged one
              130  aborted by a second signal
            """,
        version: version,
        subcommands: [Record.self, Devices.self, Formats.self, Controls.self, Encoders.self, Inspect.self, Remux.self, Verify.self, Thumbnail.self, Snapshot.self, Presets.self, Batch.self],
        defaultSubcommand: Record.self
    )

    /// Whether a command line starts with a subcommand rather than recording options.
    static func isSubcommand(_ first: String?) -> Bool {
        guard let first else { return false }
        return configuration.subcommands.contains { $0._commandName == first } || first == "help"
    }

    /// `vtrecord --help`: the commands, then the options of the recording, which `vtrecord`
    /// alone runs (`vtrecord record --help` shows those alone).
    static func overview() -> String {
        let commands = helpMessage()
        let recording = helpMessage(for: Record.self)
        guard let usage = recording.range(of: "USAGE:"),
              let options = recording.range(of: "\n\n", range: usage.upperBound..<recording.endIndex) else { return commands }
        return commands + "\n\nRECORDING (vtrecord [record] …):\n\n" + recording[options.upperBound...]
    }

    /// A command line of the parser's own flags alone (`--help`, `--version`,
    /// `--experimental-dump-help`…), which the root answers itself.
    static func isOnlyRootFlags(_ arguments: [String]) -> Bool {
        !arguments.isEmpty && arguments.allSatisfy { ["--help", "-h", "--version", "--experimental-dump-help"].contains($0) }
    }

    /// Parses, runs, and maps every failure to the documented exit codes: argument errors (which
    /// swift-argument-parser would end with 64) become 2.
    static func main() {
        StopSignals.ignoreWriteSignals()
        LoggingSystem.bootstrap { _ in DiagnosticsLogHandler(level: .info) }
        let arguments = EncoderSettings.RealTimeMode.expandingBareFlag(Array(CommandLine.arguments.dropFirst()))
        do {
            if arguments.count >= 3, arguments[0] == "presets", arguments[1] == "show", !arguments[2].hasPrefix("-"),
               !arguments.contains("--help"), !arguments.contains("-h") {
                try Presets.Show.run(name: arguments[2], flags: Array(arguments[3...]))
                Glibc.exit(0)
            }
            if arguments == ["--help"] || arguments == ["-h"] {
                print(overview())
                Glibc.exit(0)
            }
            var command: any ParsableCommand
            if isSubcommand(arguments.first) && arguments.first != Record._commandName || isOnlyRootFlags(arguments) {
                command = try parseAsRoot(arguments)
            } else {
                // Recording, named or not: the presets become arguments before the typed ones.
                let named = arguments.first == Record._commandName
                let typed = named ? Array(arguments.dropFirst()) : arguments
                let resolution = try PresetResolution.resolve(typed)
                do {
                    command = try parseAsRoot((named ? [Record._commandName] : []) + resolution.arguments)
                } catch where !resolution.presets.isEmpty && exitCode(for: error) == .validationFailure {
                    // Only a preset can have set what the message names. Without one the error
                    // goes on as it is: each message the parser makes costs it a help text.
                    throw resolution.locating(message(for: error), commandLine: typed) ?? error
                }
            }
            try command.run()
        } catch let error as any ReportableError {
            writeToStandardError("vtrecord: error: \(error.description)")
            Glibc.exit(error.exitStatus.rawValue)
        } catch let error as ExitCode {
            Glibc.exit(error.rawValue == ExitCode.validationFailure.rawValue ? ExitStatus.usage.rawValue : error.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            let text = message(for: error)
            writeToStandardError("vtrecord: error: \(text)")
            let other = arguments.first.flatMap { isSubcommand($0) && $0 != Record._commandName ? $0 : nil }
            writeToStandardError(other.map { "See 'vtrecord help \($0)' for its options." }
                                 ?? "See 'vtrecord record --help' for the recording options.")
            Glibc.exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }
}

/// `vtrecord record`, the default command: `vtrecord --device /dev/video0 -o x.mp4` is
/// `vtrecord record --device /dev/video0 -o x.mp4`. Its run is in RecordCommand.swift.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a camera, a Y4M stream or a test pattern: the recording options ('vtrecord record --help').",
        usage: "vtrecord [record] [--device <path> | --input <path> | --test-pattern] [--preset <name>…] [<options>] [-o <path>]")

    @Option(name: .customLong("preset"), help: ArgumentHelp("Take settings from a preset: a name ('vtrecord presets list') or a TOML file. Repeatable: later presets replace earlier ones key by key, and options on the command line replace both.", valueName: "name|path"))
    var presets: [String] = []

    @OptionGroup(title: "Input") var input: InputOptions
    @OptionGroup(title: "Output and stopping") var output: OutputOptions
    @OptionGroup(title: "Encoding") var encoder: EncoderOptions
    @OptionGroup(title: "Sound") var sound: AudioOptions
    @OptionGroup(title: "Events") var events: EventOptions
    @OptionGroup(title: "Keeping files") var retention: RetentionOptions
    @OptionGroup(title: "Live view and control over HTTP") var http: HTTPOptions

    /// The groups of recording options, each of which can parse its own options alone (a
    /// preset's values are checked that way).
    static let optionGroups: [(title: String, type: any ParsableArguments.Type)] = [
        ("Input", InputOptions.self), ("Output and stopping", OutputOptions.self), ("Encoding", EncoderOptions.self),
        ("Sound", AudioOptions.self), ("Events", EventOptions.self),
        ("Keeping files", RetentionOptions.self),
    ]

}
