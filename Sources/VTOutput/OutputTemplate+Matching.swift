import Foundation

/// Which files on disk a template made: what a later run numbers its files after, and what
/// retention may delete (a file the template cannot have made is never touched).
extension OutputTemplate {
    /// The folder the files go to, when the template varies only in the file's name; nil when
    /// a field sits in a folder's name.
    public var fixedDirectory: String? {
        let directory = (text as NSString).deletingLastPathComponent
        guard !directory.contains("%") && !directory.contains("{") else { return nil }
        return directory.isEmpty ? "." : directory
    }

    /// A pattern for the file names the template makes (the last path component) with
    /// `device` and `preset` as given: strftime fields match what they can print (digits for
    /// numbers, letters for names), `{n}` digits (captured), `{label}` a label's characters.
    public func fileNamePattern(device: String, preset: String?) -> Regex<AnyRegexOutput>? {
        try? Regex(fileNamePatternText(device: device, preset: preset))
    }

    /// `fileNamePattern`'s regular expression, as text.
    public func fileNamePatternText(device: String, preset: String?) -> String {
        // The file's name starts after the last '/'.
        let last = pieces.lastIndex { if case .literal(let text) = $0 { text.contains("/") } else { false } } ?? -1
        var pattern = "^"
        for (index, piece) in pieces.enumerated() where index >= last {
            switch piece {
            case .literal(let text):
                let tail = index == last ? String(text[text.index(after: text.lastIndex(of: "/")!)...]) : text
                pattern += NSRegularExpression.escapedPattern(for: tail)
            case .time(let spec):
                pattern += Self.pattern(forConversion: spec.last!)
            case .device:
                pattern += NSRegularExpression.escapedPattern(for: device)
            case .preset:
                pattern += NSRegularExpression.escapedPattern(for: preset ?? "default")
            case .segment:
                pattern += "(?<n>[0-9]+)"
            case .label:
                pattern += "[A-Za-z0-9._-]+"
            }
        }
        return pattern + "$"
    }

    /// The `{n}` after the highest a file in the template's folder already has, so that a run
    /// started again goes on numbering instead of colliding; 0 when none matches.
    public func nextNumber(device: String, preset: String?) -> Int {
        guard numbersSegments, let directory = fixedDirectory,
              let pattern = fileNamePattern(device: device, preset: preset),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var next = 0
        for name in names {
            guard let match = try? pattern.wholeMatch(in: name), let n = match["n"]?.substring.flatMap({ Int($0) }) else { continue }
            next = max(next, n + 1)
        }
        return next
    }

    /// Whether the template names a different file for each time or number: without a time
    /// field or `{n}`, every file would get the same name.
    public var namesEachFile: Bool {
        pieces.contains { piece in
            switch piece {
            case .segment: true
            case .time(let spec): "sSTrcX".contains(spec.last!)
            default: false
            }
        }
    }

    private static func pattern(forConversion letter: Character) -> String {
        switch letter {
        case "Y", "G", "C", "y", "g", "m", "d", "e", "H", "I", "k", "l", "M", "S", "j", "U", "W", "V", "u", "w", "s":
            "[ 0-9]+"
        case "z":
            "[-+][0-9]{4}"
        default:
            "[^/]+?"
        }
    }
}
