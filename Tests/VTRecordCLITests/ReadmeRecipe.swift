import Foundation
import Testing

/// One recipe of the README: a group of commands in a `sh` block, with the comment above them,
/// as `ReadmeRecipeTests` runs it: which stand-ins it needs, and each command rewritten for a
/// test (shorter recordings, the stand-ins' paths, a player that shows nothing).
struct ReadmeRecipe: Sendable, CustomTestStringConvertible {
    /// The `##` heading the block is under.
    var section: String
    /// The comment's first line, or the first command.
    var title: String
    var commands: [Command]

    var testDescription: String { title }

    /// Every command is one that cannot run here (`cannotRunHere`).
    var skipped: Bool { commands.allSatisfy { $0.cannotRunBecause != nil } }

    /// Whether a command records or takes a still from the camera (in real time).
    var capturesInRealTime: Bool {
        commands.contains { command in command.invocations.contains { $0.capturesFromCamera } }
    }

    var usesCamera: Bool { commands.contains { $0.text.contains("/dev/video0") } || capturesInRealTime }
    var usesMicrophone: Bool {
        commands.contains { command in command.invocations.contains { $0.value(of: "--audio").map { $0 != "test" } ?? false } }
    }
    var usesRenderNode: Bool { commands.contains { $0.text.contains("/dev/dri/renderD") } }

    // MARK: - Reading the README

    static func all() throws -> [ReadmeRecipe] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return parse(try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8))
    }

    /// The recipes of every `sh` block: groups of lines parted by blank lines, a group's leading
    /// `#` lines its comment. A line ending in `\` goes on in the next; ` # …` after a command
    /// is a comment.
    static func parse(_ markdown: String) -> [ReadmeRecipe] {
        var recipes: [ReadmeRecipe] = []
        var section = ""
        var inBlock = false
        var inOtherBlock = false
        var comment: [String] = []
        var commands: [Command] = []
        var continued: String?
        func finish() {
            if !commands.isEmpty {
                recipes.append(ReadmeRecipe(section: section, title: comment.first ?? commands[0].text, commands: commands))
            }
            comment = []
            commands = []
        }
        for rawLine in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if !inBlock && !inOtherBlock {
                if rawLine.hasPrefix("## ") { section = String(rawLine.dropFirst(3)) }
                if rawLine == "```sh" { inBlock = true } else if rawLine.hasPrefix("```") { inOtherBlock = true }
                continue
            }
            if rawLine.hasPrefix("```") {
                finish()
                inBlock = false
                inOtherBlock = false
                continue
            }
            if inOtherBlock { continue }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty {
                finish()
            } else if line.hasPrefix("#") && continued == nil {
                if commands.isEmpty { comment.append(String(line.drop { $0 == "#" || $0 == " " })) }
            } else if line.hasSuffix("\\") {
                continued = (continued.map { $0 + " " } ?? "") + line.dropLast().trimmingCharacters(in: .whitespaces)
            } else {
                let whole = (continued.map { $0 + " " } ?? "") + line
                continued = nil
                commands.append(Command(text: Command.withoutComment(whole)))
            }
        }
        finish()
        return recipes
    }

    /// The files in `folder` a name or template stands for: itself, or with strftime fields
    /// and `{…}` fields (`cam/{device}-%Y%m%d-{n:04}.h264`) any file its pattern matches.
    static func files(matching template: String, in folder: URL) throws -> [String] {
        guard template.contains("%") || template.contains("{") else {
            return FileManager.default.fileExists(atPath: folder.appendingPathComponent(template).path) ? [template] : []
        }
        let directory = (template as NSString).deletingLastPathComponent
        let name = (template as NSString).lastPathComponent
        var pattern = "^"
        var rest = Substring(name)
        while let c = rest.first {
            if c == "%" { pattern += ".+"; rest = rest.dropFirst(2) }
            else if c == "{", let end = rest.firstIndex(of: "}") { pattern += ".+"; rest = rest[rest.index(after: end)...] }
            else { pattern += NSRegularExpression.escapedPattern(for: String(c)); rest = rest.dropFirst() }
        }
        let regex = try Regex(pattern + "$")
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(directory).path)) ?? []
        return listed.filter { $0.wholeMatch(of: regex) != nil }.map { directory.isEmpty ? $0 : directory + "/" + $0 }
    }
}

/// The stand-ins' paths, for the devices a recipe names.
struct StandIns {
    var camera: String?
    var renderNode: String?

    func replaces(_ path: String) -> Bool {
        (path == "/dev/video0" && camera != nil) || (path.hasPrefix("/dev/dri/renderD") && renderNode != nil)
    }
}

extension ReadmeRecipe {
    /// One command line of a recipe.
    struct Command: Sendable {
        /// As the README has it.
        var text: String

        /// Shell words as written, quotes kept, so a rewritten command is the README's text
        /// but for the words changed.
        var words: [String] { Self.words(text) }

        /// The words of each program run, between ` | `, ` && `, ` || ` and ` ; `.
        var segments: [[String]] {
            words.split(whereSeparator: { Self.operators.contains($0) }).map(Array.init)
        }

        /// The vtrecord runs: `vtrecord …`, and `make run ARGS="…"`, which runs the release
        /// binary with those arguments.
        var invocations: [Invocation] {
            segments.compactMap { words in
                if words.first == "vtrecord" { return Invocation(arguments: Array(words.dropFirst())) }
                if words.prefix(2) == ["make", "run"], let args = words.first(where: { $0.hasPrefix("ARGS=") }) {
                    return Invocation(arguments: Self.words(Self.unquoted(String(args.dropFirst(5)))))
                }
                return nil
            }
        }

        var cannotRunBecause: String? {
            // `make run ARGS="…"` is run: as the tests' build with those arguments.
            if isMakeRunWithArguments { return nil }
            return ReadmeRecipe.cannotRunHere.first(where: { text.hasPrefix($0.prefix) })?.reason
        }

        var isMakeRunWithArguments: Bool {
            words.prefix(2) == ["make", "run"] && words.contains { $0.hasPrefix("ARGS=") }
        }

        /// The files the command writes and names: `-o`/`--output` of any program (not `-`),
        /// and vtrecord's `--json-summary`, `--snapshot` and a recording's `--timestamps`.
        var outputs: [String] {
            var names: [String] = []
            for words in segments {
                let recording = words.first == "vtrecord" && Invocation(arguments: Array(words.dropFirst())).isRecording
                let options = ["-o", "--output", "--json-summary", "--snapshot"] + (recording ? ["--timestamps"] : [])
                for (index, word) in words.enumerated().dropLast() where options.contains(word) {
                    let value = Self.unquoted(words[index + 1])
                    if value != "-" { names.append(value) }
                }
            }
            return names
        }

        /// Absolute paths the command names (a device, a file outside the recipe's folder).
        var absolutePaths: [String] {
            words.map(Self.unquoted).filter { $0.hasPrefix("/") || $0.hasPrefix("~") }
        }

        /// The command as it runs in a test:
        /// - `make run ARGS="…"` runs the tests' build with those arguments;
        /// - `/dev/video0` is the stand-in camera, `/dev/dri/renderD…` the stand-in VA-API device;
        /// - a recording lasts 1 s (`--duration`, or added when it would last as long as its
        ///   source: a camera or the test pattern), 2 s when it is cut into segments of 1 s
        ///   (`--segment-time`), at most 30 frames (`--frames`); the test pattern is drawn at
        ///   320x240 unless the recipe gives a size (the camera offers only that size);
        /// - `ffplay OPTIONS INPUT` becomes `ffmpeg -nostdin OPTIONS -i INPUT -f null -`: a player
        ///   that shows nothing, and whose exit status says whether it could play the stream
        ///   (ffplay's is 0 either way).
        func rewritten(_ standIns: StandIns) -> String {
            var pieces: [String] = []
            var segment: [String] = []
            func finishSegment() {
                pieces.append(Self.rewrite(segment, standIns).joined(separator: " "))
                segment = []
            }
            for word in words {
                if Self.operators.contains(word) {
                    finishSegment()
                    pieces.append(word)
                } else {
                    segment.append(word)
                }
            }
            finishSegment()
            return pieces.joined(separator: " ")
        }

        static let operators: Set<String> = ["|", "||", "&&", ";"]

        private static func rewrite(_ segment: [String], _ standIns: StandIns) -> [String] {
            var words = segment.map { word -> String in
                if word == "/dev/video0", let camera = standIns.camera { return camera }
                if word.hasPrefix("/dev/dri/renderD"), let node = standIns.renderNode { return node }
                return word
            }
            if words.prefix(2) == ["make", "run"], let invocation = Command(text: words.joined(separator: " ")).invocations.first {
                words = ["vtrecord"] + invocation.arguments
            }
            if words.first == "vtrecord" {
                words = ["vtrecord"] + Invocation(arguments: Array(words.dropFirst())).shortened.arguments
            }
            if words.first == "ffplay", let input = words.last {
                words = ["ffmpeg", "-nostdin"] + words.dropFirst().dropLast() + ["-i", input, "-f", "null", "-"]
            }
            return words
        }

        /// `cmd  # note` → `cmd`: a `#` that starts a word, outside quotes.
        static func withoutComment(_ line: String) -> String {
            var quote: Character?
            var previous: Character = " "
            for index in line.indices {
                let c = line[index]
                if let q = quote {
                    if c == q { quote = nil }
                } else if c == "'" || c == "\"" {
                    quote = c
                } else if c == "#" && previous.isWhitespace {
                    return line[..<index].trimmingCharacters(in: .whitespaces)
                }
                previous = c
            }
            return line
        }

        /// Shell words, split at unquoted spaces, each kept as written.
        static func words(_ line: String) -> [String] {
            var words: [String] = []
            var current = ""
            var quote: Character?
            var escaped = false
            for c in line {
                if escaped {
                    current.append(c)
                    escaped = false
                } else if c == "\\" && quote != "'" {
                    current.append(c)
                    escaped = true
                } else if let q = quote {
                    current.append(c)
                    if c == q { quote = nil }
                } else if c == "'" || c == "\"" {
                    current.append(c)
                    quote = c
                } else if c.isWhitespace {
                    if !current.isEmpty { words.append(current) }
                    current = ""
                } else {
                    current.append(c)
                }
            }
            if !current.isEmpty { words.append(current) }
            return words
        }

        /// A word as the program receives it: quotes removed.
        static func unquoted(_ word: String) -> String {
            var result = ""
            var quote: Character?
            for c in word {
                if let q = quote, c == q { quote = nil } else if quote == nil && (c == "'" || c == "\"") { quote = c } else { result.append(c) }
            }
            return result
        }
    }

    /// The arguments of one vtrecord run.
    struct Invocation: Sendable {
        var arguments: [String]

        /// The recording command takes no word but options; any other command is named first.
        var isRecording: Bool { arguments.first.map { $0.hasPrefix("-") } ?? true }
        var isSnapshot: Bool { arguments.first == "snapshot" }

        func value(of option: String) -> String? {
            arguments.firstIndex(of: option).flatMap { $0 + 1 < arguments.count ? Command.unquoted(arguments[$0 + 1]) : nil }
        }

        var recordsTestPattern: Bool { arguments.contains("--test-pattern") }
        var readsFile: Bool { arguments.contains("--input") }

        /// A recording or still from the camera: the recording command with neither a file nor
        /// the test pattern as its source (the camera is the default), or `snapshot`.
        var capturesFromCamera: Bool { (isRecording && !recordsTestPattern && !readsFile) || isSnapshot }

        /// What `Command.rewritten` describes for a recording.
        var shortened: Invocation {
            guard isRecording else { return self }
            var arguments = self.arguments
            let segmented = arguments.contains("--segment-time")
            let duration = segmented ? "2s" : "1s"
            func set(_ option: String, _ value: (String) -> String) {
                if let index = arguments.firstIndex(of: option), index + 1 < arguments.count {
                    arguments[index + 1] = value(arguments[index + 1])
                }
            }
            set("--duration") { _ in duration }
            set("--segment-time") { _ in "1s" }
            set("--frames") { String(min(Int($0) ?? 30, 30)) }
            // A file ends by itself; a camera and the test pattern go on until stopped.
            if !readsFile && !arguments.contains("--duration") && !arguments.contains("--frames") {
                arguments += ["--duration", duration]
            }
            if recordsTestPattern && !arguments.contains("--size") {
                arguments += ["--size", "320x240"]
            }
            return Invocation(arguments: arguments)
        }
    }
}
