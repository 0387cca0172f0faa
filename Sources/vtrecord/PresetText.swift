import Foundation

/// Writes resolved settings as a preset file: TOML a user can save, edit and pass back with
/// `--preset FILE`.
enum PresetText {
    static func render(entries: [Preset.Entry], origins: [String: String], description: String?,
                       header: String, catalog: RecordingOptionCatalog) -> String {
        // The command line may hold anything, newlines included: escaped, it stays a comment.
        var text = "# \(String(quoted(header).dropFirst().dropLast()))\n"
        text += "# Resolved: vtrecord's defaults, then each preset in order, then the command line.\n"
        text += "# Save this as a .toml file and record with --preset FILE.\n"
        if let description { text += "description = \(quoted(description))\n" }
        text += "\n"
        let lines = entries.map { entry in "\(entry.key) = \(value(entry.value))" }
        let width = min(lines.map(\.count).max() ?? 0, 48)
        for (entry, line) in zip(entries, lines) {
            let origin = origins[entry.key].map { "  # \($0)" } ?? ""
            text += line.padding(toLength: max(width, line.count), withPad: " ", startingAt: 0) + origin + "\n"
        }
        let set = Set(entries.map(\.key))
        let unset = catalog.options.filter { !set.contains($0.name) }
        if !unset.isEmpty {
            text += "\n# Not set, so vtrecord's defaults apply ('vtrecord record --help' describes them):\n"
            for option in unset {
                switch option.kind {
                case .flag: text += "# \(option.name) = false\n"
                case .invertibleFlag: text += "# \(option.name)\n"
                case .option, .repeating:
                    text += "# \(option.name)" + (option.defaultValue.map { " = \(scalar($0))" } ?? "") + "\n"
                }
            }
        }
        return text
    }

    /// Numbers bare, everything else as a TOML string.
    static func value(_ value: Preset.Entry.Value) -> String {
        switch value {
        case .flag(let flag): return flag ? "true" : "false"
        case .text(let text): return scalar(text)
        case .list(let items): return "[" + items.map(quoted).joined(separator: ", ") + "]"
        }
    }

    private static func scalar(_ text: String) -> String {
        if text.wholeMatch(of: /-?(0|[1-9][0-9]{0,17})(\.[0-9]+)?/) != nil { return text }
        return quoted(text)
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
