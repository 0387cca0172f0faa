import ArgumentParser
import VTCore
import VTRecorder

/// `vtrecord presets list|show`.
struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List the presets, or show what one adds up to.",
        discussion: """
            A preset is a TOML file whose keys are the recording options' long names \
            (size = "1920x1080", fps = 30, control = ["brightness=20"]) plus a description. \
            '--preset NAME' looks in $XDG_CONFIG_HOME/vtrecord/presets (default \
            ~/.config/vtrecord/presets), then PREFIX/share/vtrecord/presets, then the presets \
            built into vtrecord; '--preset PATH' reads a file.
            """,
        subcommands: [List.self, Show.self]
    )

    /// `vtrecord presets list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List every preset a name finds: name, description and where it comes from.")

        @Flag(name: .long, help: "Print the list as JSON: an array of {name, description, source, path, overrides}.")
        var json = false

        func run() throws {
            let library = PresetLibrary.standard()
            var rows: [PresetJSON] = []
            for listing in library.available() {
                let preset = Result { try library.load(listing.origin.reference(for: listing.name)) }
                let description: String?
                switch preset {
                case .success(let preset): description = preset.description
                case .failure(let error): description = "(unreadable: \(error))"
                }
                rows.append(PresetJSON(name: listing.name, description: description, origin: listing.origin,
                                       overrides: listing.overrides))
            }
            if json {
                try printJSON(rows)
                return
            }
            let width = rows.map(\.name.count).max() ?? 0
            for row in rows {
                let padded = row.name.padding(toLength: width, withPad: " ", startingAt: 0)
                var line = "\(padded)  \(row.description ?? "")  [\(row.path ?? "built in")]"
                if !row.overrides.isEmpty { line += " (overrides \(row.overrides.joined(separator: ", ")))" }
                print(line)
            }
        }
    }

    /// `vtrecord presets show NAME [flags…]`. The command line is read by `run(name:flags:)`
    /// before swift-argument-parser sees it: the parser would give recording options to the
    /// root command instead of this one.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the settings a preset and further options add up to, as TOML that can be saved and edited.",
            discussion: """
                Options after the name are layered as when recording: 'vtrecord presets show \
                720p30 --preset low-latency --bitrate 2M' shows what 'vtrecord --preset 720p30 \
                --preset low-latency --bitrate 2M' would record with. Each line says where its \
                value comes from; options left at their defaults are listed as comments.
                """)

        @Argument(help: ArgumentHelp("A preset name or a path to a TOML file.", valueName: "name"))
        var name: String

        @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Recording options and further --preset options, layered over the preset.", valueName: "options"))
        var options: [String] = []

        func run() throws {
            try Self.run(name: name, flags: options)
        }

        static func run(name: String, flags: [String]) throws {
            let catalog = RecordingOptionCatalog.shared
            let commandLine = ["--preset", name] + flags
            let resolution = try PresetResolution.resolve(commandLine)
            // The combination must be one the recording command accepts.
            do {
                _ = try Record.parseAsRoot(resolution.arguments)
            } catch where Record.exitCode(for: error) == .validationFailure {
                throw resolution.locating(Record.message(for: error), commandLine: commandLine) ?? error
            }
            let typed = CommandLineEntries.entries(in: flags, catalog: catalog)
            var origins: [String: String] = [:]
            for preset in resolution.presets {
                for entry in preset.entries { origins[entry.key] = "preset \(preset.name)" }
            }
            for entry in typed { origins[entry.key] = "command line" }
            let merged = mergeWithCommandLine(resolution.entries, typed, catalog: catalog)
            print(PresetText.render(entries: merged, origins: origins,
                                    description: resolution.presets.last { $0.description != nil }?.description,
                                    header: "vtrecord presets show \(commandLine.dropFirst().joined(separator: " "))",
                                    catalog: catalog), terminator: "")
        }

        /// The command line replaces a preset's value, except for repeatable options, whose
        /// values add up (as they do when recording).
        private static func mergeWithCommandLine(_ presets: [Preset.Entry], _ typed: [Preset.Entry],
                                                 catalog: RecordingOptionCatalog) -> [Preset.Entry] {
            var byKey = Dictionary(presets.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
            for entry in typed {
                if case .list(let more) = entry.value, case .list(let earlier)? = byKey[entry.key]?.value {
                    byKey[entry.key] = Preset.Entry(key: entry.key, value: .list(earlier + more), line: 0)
                } else {
                    byKey[entry.key] = entry
                }
            }
            return catalog.keys.compactMap { byKey[$0] }
        }
    }
}

/// One row of `vtrecord presets list --json`.
struct PresetJSON: Encodable {
    let name: String
    @NullWhenAbsent var description: String?
    /// "builtin" or "file".
    let source: String
    @NullWhenAbsent var path: String?
    let overrides: [String]

    init(name: String, description: String?, origin: PresetOrigin, overrides: [PresetOrigin]) {
        self.name = name
        self.description = description
        switch origin {
        case .builtIn: source = "builtin"; path = nil
        case .file(let file): source = "file"; path = file
        }
        self.overrides = overrides.map { origin in
            if case .file(let file) = origin { return file }
            return "built in"
        }
    }
}

extension PresetOrigin {
    /// What `--preset` takes to load exactly this preset.
    func reference(for name: String) -> String {
        switch self {
        case .builtIn: name
        case .file(let path): path
        }
    }
}
