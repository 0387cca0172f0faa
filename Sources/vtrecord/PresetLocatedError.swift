import VTCapture
import VTCore

/// An error about a value that came from a preset, prefixed with the file, line and key it
/// came from, so the user knows which file to edit.
struct PresetLocatedError: ReportableError {
    let location: String
    let underlying: any ReportableError

    var exitStatus: ExitStatus { underlying.exitStatus }
    var description: String { "\(location): \(underlying.description)" }

    /// A `--control` the camera refused, located in the preset that set it; the error as it is
    /// when the command line set it (or no preset did).
    static func locating(_ error: ControlError, presets: [String], commandLine: [String]) -> any ReportableError {
        let catalog = RecordingOptionCatalog.shared
        let typed = CommandLineEntries.entries(in: commandLine, catalog: catalog)
        if typed.contains(where: { $0.key == "control" && $0.value.items.contains { ControlSetting(parsing: $0) == error.setting } }) {
            return error
        }
        let library = PresetLibrary.standard()
        for reference in presets.reversed() {
            guard let preset = try? library.load(reference) else { continue }
            for entry in preset.entries where entry.key == "control"
                && entry.value.items.contains(where: { ControlSetting(parsing: $0) == error.setting }) {
                return PresetLocatedError(location: "\(preset.origin):\(entry.line): control", underlying: error)
            }
        }
        return error
    }
}

extension Preset.Entry.Value {
    /// The values of a list; a single value as a list of one.
    var items: [String] {
        switch self {
        case .list(let items): items
        case .text(let text): [text]
        case .flag: []
        }
    }
}

extension PresetResolution {
    /// A refusal of the resolved settings (a value out of range, options that do not go
    /// together), located in the preset that set the first option it names — unless the
    /// command line set that option, or no preset did.
    func locating(_ message: String, commandLine: [String]) -> (any ReportableError)? {
        guard let option = Self.firstOption(in: message, catalog: .shared) else { return nil }
        let typed = CommandLineEntries.entries(in: commandLine, catalog: .shared)
        if typed.contains(where: { $0.key == option }) { return nil }
        for preset in presets.reversed() {
            if let entry = preset.entries.first(where: { $0.key == option }) {
                return PresetLocatedError(location: "\(preset.origin):\(entry.line): \(option)", underlying: UsageError(message))
            }
        }
        return nil
    }

    /// The key of the first option a message names, by its long name (`--segment-time`) or its
    /// short one (`-o`, as the output template's messages call it).
    static func firstOption(in message: String, catalog: RecordingOptionCatalog) -> String? {
        for match in message.matches(of: /(?:^|[^A-Za-z0-9-])-(-[a-z][a-z0-9-]*|[A-Za-z](?![A-Za-z0-9]))/) {
            let name = match.output.1
            if name.hasPrefix("-") { return String(name.dropFirst()) }
            if let option = catalog.option(shortName: String(name)) { return option.name }
        }
        return nil
    }
}
