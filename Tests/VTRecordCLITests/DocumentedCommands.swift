import Foundation

/// What a document describes, command by command: which commands have an entry of their own
/// and which options have an entry of their own under each. Commands are keyed as in
/// `CommandTree` (`[]` for the recording command, `["presets", "list"]`).
struct DocumentedCommands {
    /// Commands with an entry (`.It Cm devices` in the man page, a `### \`vtrecord devices\``
    /// heading in the README).
    var commands: Set<[String]> = []
    /// Option names with an entry, by the command whose entry they are under.
    var options: [[String]: Set<String>] = [:]
    /// Every option name with an entry anywhere.
    var allOptions: Set<String> { options.values.reduce(into: []) { $0.formUnion($1) } }

    /// The man page's entries. An option is documented by a list item of its own
    /// (`.It Fl -size Ar WxH`, `.It Fl o , Fl -output Ar path`); a subcommand by a list item
    /// starting with `Cm` (`.It Cm formats`, `.It Cm presets show Ar name`), and its options
    /// by the items of lists nested in that item. Items outside any command's item belong to
    /// the recording command. Options named in running text do not count.
    static func manPage(_ text: String) -> DocumentedCommands {
        var result = DocumentedCommands()
        struct List {
            var owner: [String]
            var currentCommand: [String]?
        }
        var lists: [List] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let words = line.split(separator: " ").map(String.init)
            guard let macro = words.first else { continue }
            switch macro {
            case ".Bl":
                let owner = lists.last.map { $0.currentCommand ?? $0.owner } ?? []
                lists.append(List(owner: owner, currentCommand: nil))
            case ".El":
                _ = lists.popLast()
            case ".It" where !lists.isEmpty:
                let arguments = Array(words.dropFirst())
                let owner = lists[lists.count - 1].owner
                if arguments.first == "Cm" {
                    let names = arguments.drop(while: { $0 == "Cm" }).prefix(while: { !isMacro($0) || $0 == "Cm" })
                        .filter { $0 != "Cm" }
                    let path = owner + names
                    result.commands.insert(path)
                    lists[lists.count - 1].currentCommand = path
                } else {
                    lists[lists.count - 1].currentCommand = nil
                    for (index, word) in arguments.enumerated() where word == "Fl" && index + 1 < arguments.count {
                        result.options[owner, default: []].insert("-" + arguments[index + 1])
                    }
                }
            default:
                continue
            }
        }
        return result
    }

    /// The lines of `.Sh SYNOPSIS` that name a subcommand: `.Cm presets show` gives
    /// `["presets", "show"]`.
    static func manPageSynopsis(_ text: String) -> Set<[String]> {
        guard let start = text.range(of: ".Sh SYNOPSIS\n") else { return [] }
        let rest = text[start.upperBound...]
        let section = rest.range(of: "\n.Sh ").map { rest[..<$0.lowerBound] } ?? rest
        var result: Set<[String]> = []
        for line in section.split(separator: "\n") where line.hasPrefix(".Cm ") {
            let words = line.split(separator: " ").dropFirst().map(String.init)
            result.insert(words.prefix(while: { !isMacro($0) || $0 == "Cm" }).filter { $0 != "Cm" })
        }
        return result
    }

    /// The README's option reference: the section `## Option reference`, a `###` heading per
    /// command naming it in code (`` ### `vtrecord formats` ``; words after the command that are
    /// not lower-case names, such as `FILE`, are its arguments), and under it one line per
    /// option, starting with the option's spellings in code before a dash:
    /// `` - `-o PATH`, `--output PATH` — … ``.
    static func readme(_ text: String) -> DocumentedCommands {
        var result = DocumentedCommands()
        guard let start = text.range(of: "\n## Option reference\n") else { return result }
        let rest = text[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var current: [String]?
        for line in section.split(separator: "\n") {
            if line.hasPrefix("### ") {
                current = codeSpans(in: line).first.flatMap { span -> [String]? in
                    let words = span.split(separator: " ").map(String.init)
                    guard words.first == "vtrecord" else { return nil }
                    return Array(words.dropFirst().prefix(while: { $0.wholeMatch(of: /[a-z][a-z0-9-]*/) != nil }))
                }
                if let current { result.commands.insert(current) }
            } else if line.hasPrefix("- `"), let current {
                let head = line.components(separatedBy: " — ").first ?? ""
                for span in codeSpans(in: head) {
                    if let name = span.split(separator: " ").first, name.hasPrefix("-") {
                        result.options[current, default: []].insert(String(name))
                    }
                }
            }
        }
        return result
    }

    /// mdoc macro names are a capital and one or two lower-case letters (`Fl`, `Ar`, `Op`);
    /// command names are lower case.
    private static func isMacro(_ word: String) -> Bool {
        word.wholeMatch(of: /[A-Z][a-z]{1,2}/) != nil
    }

    private static func codeSpans(in line: Substring) -> [String] {
        line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    private static func codeSpans(in line: String) -> [String] { codeSpans(in: Substring(line)) }
}
