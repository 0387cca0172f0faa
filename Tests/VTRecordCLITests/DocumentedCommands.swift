import Foundation

/// What a document describes, command by command: which commands have an entry of their own
/// and which options have an entry of their own under each. Commands are keyed as in
/// `CommandTree` (`[]` for the recording command, `["presets", "list"]`).
struct DocumentedCommands {
    /// Commands with an entry (`.It Cm devices` in the man page).
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

    /// Options a Markdown document names, with the command it names them for. Read from the
    /// document's code: the lines of its fenced blocks and its inline code spans (a span may
    /// run over a line break). A piece is cut into commands at ` | `, ` || `, ` && ` and ` ; `;
    /// a command that starts with `vtrecord` names options of the vtrecord command its next
    /// words make (`vtrecord thumbnail night.mp4 --tile 4x3`: `--tile` of `thumbnail`), and
    /// `make run ARGS="…"` options of the recording command. A span that starts with an option
    /// (`--segment-time 60s`) names options of no command in particular. Code of other
    /// programs (`ffmpeg -i …`, `mkvmerge -o …`) names none. A word ending in `-` is a prefix
    /// the text talks about (`the --no- form`), not an option.
    struct OptionMention: Equatable, CustomStringConvertible {
        /// The command's words after `vtrecord` (`[]`: recording), nil for a span that names an
        /// option alone.
        var command: [String]?
        /// A word after `vtrecord` that is neither an option nor a command: the document calls
        /// a command that does not exist (`vtrecord frobnicate`). Nil when the command is known.
        var unknownCommand: String?
        var options: [String]
        /// The code the mention was read from.
        var code: String

        var description: String { "`\(code)`" }
    }

    static func optionMentions(inMarkdown text: String, commands: Set<[String]>) -> [OptionMention] {
        var pieces: [String] = []
        var prose: [Substring] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.drop(while: { $0 == " " }).hasPrefix("```") {
                fenced.toggle()
            } else if fenced {
                pieces.append(String(line))
            } else {
                prose.append(line)
            }
        }
        pieces += codeSpans(in: Substring(prose.joined(separator: "\n"))).map { $0.replacingOccurrences(of: "\n", with: " ") }
        var mentions: [OptionMention] = []
        for piece in pieces {
            for command in piece.split(separator: /\ (?:\|\||&&|\||;)\ /).map(String.init) {
                if let mention = mention(in: command, commands: commands) { mentions.append(mention) }
            }
        }
        return mentions
    }

    private static func mention(in command: String, commands: Set<[String]>) -> OptionMention? {
        // Brackets mark optional parts in a synopsis (`[--json]`).
        let words = command.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
            .filter { !$0.isEmpty }
        guard let first = words.first else { return nil }
        if first == "make", let arguments = command.firstMatch(of: /ARGS="([^"]*)"/)?.output.1 {
            return mention(in: "vtrecord " + arguments, commands: commands)
        }
        if first.hasPrefix("-") {
            let options = optionNames(in: words)
            return options.isEmpty ? nil : OptionMention(command: nil, options: options, code: command)
        }
        guard first == "vtrecord" else { return nil }
        let rest = Array(words.dropFirst())
        // `vtrecord help COMMAND` names a command, not options.
        if rest.first == "help" { return nil }
        let names = rest.prefix { !$0.hasPrefix("-") }
        var path: [String] = []
        for length in stride(from: min(2, names.count), through: 1, by: -1) where commands.contains(Array(names.prefix(length))) {
            path = Array(names.prefix(length))
            break
        }
        // The recording command takes no positional argument: a word before its options is a
        // command name.
        let unknown = path.isEmpty ? names.first : nil
        return OptionMention(command: path, unknownCommand: unknown, options: optionNames(in: rest), code: command)
    }

    /// `--tile 4x3` → `--tile`, `--control=x` → `--control`, `-o` → `-o`; not `-` (standard
    /// input or output), a value such as `-20`, or a prefix such as `--no-`.
    private static func optionNames(in words: [String]) -> [String] {
        words.compactMap { word in
            guard let name = word.prefixMatch(of: /--?[A-Za-z][A-Za-z0-9-]*/)?.output else { return nil }
            return name.hasSuffix("-") ? nil : String(name)
        }
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

}
