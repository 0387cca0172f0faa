import ArgumentParser
import VTCore

/// Layers settings as the x264 CLI does: built-in defaults → presets in the order given →
/// options on the command line. Presets become command-line arguments placed before the
/// user's, so one parser reads both and the last value of an option wins.
struct PresetResolution {
    /// The presets named on the command line, in order.
    let presets: [Preset]
    /// The settings the presets add up to, each key once, in the command's option order.
    let entries: [Preset.Entry]
    /// The arguments to parse: the presets' settings, then the command line as typed.
    let arguments: [String]

    /// `--preset NAME|PATH` values on a command line (before any `--`).
    static func presetReferences(in arguments: [String]) -> [String] {
        var references: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--preset", index + 1 < arguments.endIndex {
                references.append(arguments[index + 1])
                index += 2
                continue
            }
            if argument.hasPrefix("--preset=") { references.append(String(argument.dropFirst("--preset=".count))) }
            index += 1
        }
        return references
    }

    static func resolve(_ commandLine: [String], library: PresetLibrary = .standard()) throws -> PresetResolution {
        let presets = try presetReferences(in: commandLine).map { try library.load($0) }
        // Without a preset the command line is all there is. The catalog (a dump of every
        // option, built on first use) is most of a run's start-up: 90 of 143 million
        // instructions for `--version`.
        guard !presets.isEmpty else { return PresetResolution(presets: [], entries: [], arguments: commandLine) }
        let catalog = RecordingOptionCatalog.shared
        let typed = CommandLineEntries.entries(in: commandLine, catalog: catalog)
        let typedKeys = Set(typed.map(\.key))
        let entries = fitted(merge(presets.map(\.entries) + [typed.filter { sourceKeys.contains($0.key) }], catalog: catalog)
                                 .filter { !typed.contains($0) }
                                 .filter { !(replacedWhole.contains($0.key) && typedKeys.contains($0.key)) }, typed: typed)
        let arguments = entries.flatMap { $0.arguments(catalog: catalog) } + commandLine
        return PresetResolution(presets: presets, entries: entries, arguments: arguments)
    }

    /// Repeatable options that the command line gives whole rather than adds to: `-o` names
    /// every output, the recording first, so a preset's outputs give way to the typed ones.
    static let replacedWhole: Set<String> = ["output"]

    /// The options that name the source: one layer naming a source replaces the source of
    /// the layers before it, whichever of these it used.
    static let sourceKeys: Set<String> = ["device", "input", "test-pattern"]

    /// A preset made for cameras still serves a file or the test pattern: what only a camera
    /// takes is left out when the source is another one, and a file keeps its own rate (for a
    /// file `--fps` retimes it). Given on the command line they still mean what they say.
    static func fitted(_ entries: [Preset.Entry], typed: [Preset.Entry]) -> [Preset.Entry] {
        let all = entries + typed
        let file = all.contains { $0.key == "input" }
        let pattern = all.contains { $0.key == "test-pattern" && $0.value == .flag(true) }
        return entries.filter { entry in
            switch entry.key {
            case "size", "fps": !file
            case "control": !file && !pattern
            default: true
            }
        }
    }

    /// Later layers replace earlier ones key by key, and a layer that names a source replaces
    /// the earlier layers' source.
    static func merge(_ layers: [[Preset.Entry]], catalog: RecordingOptionCatalog) -> [Preset.Entry] {
        var merged: [String: Preset.Entry] = [:]
        for layer in layers {
            if layer.contains(where: { sourceKeys.contains($0.key) }) {
                for key in sourceKeys { merged[key] = nil }
            }
            for entry in layer { merged[entry.key] = entry }
        }
        return catalog.keys.compactMap { merged[$0] }
    }
}

extension Preset.Entry {
    /// The entry as command-line arguments.
    func arguments(catalog: RecordingOptionCatalog = .shared) -> [String] {
        switch value {
        // Attached, so that a value starting with "-" is not read as an option.
        case .text(let text): return ["--\(key)=\(text)"]
        case .list(let items): return items.map { "--\(key)=\($0)" }
        case .flag(true): return ["--\(key)"]
        case .flag(false): return catalog.option(key)?.kind == .invertibleFlag ? ["--no-\(key)"] : []
        }
    }
}

/// Checks a preset value with the same parser as the command line, so that a value a flag
/// would refuse is refused in a preset, with the same words.
enum PresetValueCheck {
    static func problem(with entry: Preset.Entry, catalog: RecordingOptionCatalog = .shared) -> String? {
        let arguments = entry.arguments(catalog: catalog)
        guard !arguments.isEmpty else { return nil }
        let section = catalog.option(entry.key)?.section
        guard let group = Record.optionGroups.first(where: { $0.title == section })?.type else {
            return "no option group of vtrecord takes --\(entry.key)"
        }
        do {
            _ = try group.parse(arguments)
            return nil
        } catch {
            return group.message(for: error)
        }
    }
}

/// Reads recording options off a command line as preset entries, to show where each resolved
/// value came from. Only for display: the command line itself is checked by the parser.
enum CommandLineEntries {
    static func entries(in arguments: [String], catalog: RecordingOptionCatalog) -> [Preset.Entry] {
        var entries: [Preset.Entry] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            var name: String
            var attached: String?
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    attached = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
            } else if argument.hasPrefix("-"), argument.count == 2 {
                let short = String(argument.dropFirst())
                guard let option = catalog.option(shortName: short) else { continue }
                name = option.name
            } else {
                continue
            }
            if name.hasPrefix("no-"), let option = catalog.option(String(name.dropFirst(3))), option.kind == .invertibleFlag {
                entries.append(Preset.Entry(key: option.name, value: .flag(false), line: 0))
                continue
            }
            guard let option = catalog.option(name) else {
                // --preset and other options that take a value: skip the value too.
                if name == "preset" && attached == nil { index += 1 }
                continue
            }
            switch option.kind {
            case .flag, .invertibleFlag:
                entries.append(Preset.Entry(key: name, value: .flag(true), line: 0))
            case .option, .repeating:
                guard let value = attached ?? (index < arguments.count ? arguments[index] : nil) else { continue }
                if attached == nil { index += 1 }
                let previous = entries.last { $0.key == name }
                if option.kind == .repeating, case .list(let items)? = previous?.value {
                    entries.removeAll { $0.key == name }
                    entries.append(Preset.Entry(key: name, value: .list(items + [value]), line: 0))
                } else {
                    entries.removeAll { $0.key == name }
                    entries.append(Preset.Entry(key: name, value: option.kind == .repeating ? .list([value]) : .text(value), line: 0))
                }
            }
        }
        return entries
    }
}
