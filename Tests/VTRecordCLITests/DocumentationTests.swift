import Foundation
import Testing

/// The man page, the README and docs/ must describe the binary that was built.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func document(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
    }

    /// The dump is what the checks below trust, so first make sure it is read right: it holds
    /// the options and commands known to exist, and every option any help text names.
    @Test func commandTreeHoldsWhatHelpShows() throws {
        let tree = try CommandTree.ofBuiltBinary()
        #expect(tree.root.path.isEmpty)
        #expect(tree.root.options.isSuperset(of: ["--input", "--test-pattern", "--json-summary", "--control",
                                                  "-o", "--output", "--realtime", "--no-realtime", "--help", "--version"]))
        let paths = Set(tree.commands.map(\.path))
        #expect(paths.isSuperset(of: [["devices"], ["formats"], ["controls"], ["encoders"], ["inspect"],
                                      ["presets"], ["presets", "list"], ["presets", "show"], ["batch"]]), "\(paths)")
        #expect(!paths.contains(["help"]))
        #expect(tree.commands.first { $0.path == ["formats"] }?.options.contains("--device") == true)
        for command in tree.commands {
            let help = try Tools.vtrecord(command.path.isEmpty ? ["--help"] : ["help"] + command.path)
            #expect(help.status == 0, "\(command.name) --help: \(help.stderr)")
            let named = Set(help.stdoutText.matches(of: /--[a-z][a-z0-9-]+/).map { String($0.output) })
            #expect(named.subtracting(tree.allOptions).isEmpty,
                    "\(command.name) --help names options the dump lacks: \(named.subtracting(tree.allOptions).sorted())")
        }
    }

    /// Each option name belongs to one option of a command. swift-argument-parser checks this
    /// only where DEBUG is defined, and the tests' build leaves it out (see docs/testing.md).
    @Test func noOptionNameIsGivenToTwoOptions() throws {
        let tree = try CommandTree.ofBuiltBinary()
        for command in tree.commands {
            #expect(command.sharedNames.isEmpty, "\(command.name): \(command.sharedNames.sorted()) name two options each")
        }
        // The reading itself: a dump with one name twice.
        let twice = #"{"serializationVersion":0,"command":{"commandName":"x","arguments":[{"kind":"option","names":[{"kind":"long","name":"a"}],"shouldDisplay":true,"isOptional":true,"isRepeating":false},{"kind":"flag","names":[{"kind":"long","name":"a"}],"shouldDisplay":true,"isOptional":true,"isRepeating":false}]}}"#
        #expect(try CommandTree(dumpHelpJSON: Data(twice.utf8)).root.sharedNames == ["--a"])
    }

    /// Each command has an entry of its own in the man page, and each of its options an entry
    /// within it; the man page has no entry for an option the binary lacks.
    @Test func manPageHasAnEntryForEveryCommandAndOption() throws {
        let tree = try CommandTree.ofBuiltBinary()
        let man = DocumentedCommands.manPage(try Self.document("man/vtrecord.1"))
        for command in tree.commands {
            if !command.path.isEmpty {
                #expect(man.commands.contains(command.path),
                        "man/vtrecord.1 has no '.It Cm \(command.path.joined(separator: " "))' entry")
            }
            let missing = command.documentedOptions.subtracting(man.options[command.path] ?? [])
            #expect(missing.isEmpty, "man/vtrecord.1 has no '.It Fl' entry under \(command.name) for \(missing.sorted())")
        }
        let unknown = man.allOptions.subtracting(tree.allOptions)
        #expect(unknown.isEmpty, "man/vtrecord.1 documents options vtrecord does not have: \(unknown.sorted())")
    }

    @Test func manPageSynopsisShowsEveryCommand() throws {
        let tree = try CommandTree.ofBuiltBinary()
        let synopsis = DocumentedCommands.manPageSynopsis(try Self.document("man/vtrecord.1"))
        // A command that only groups others (presets) is shown by their lines.
        for command in tree.commands where !command.path.isEmpty && !command.hasSubcommands {
            #expect(synopsis.contains(command.path), "SYNOPSIS of man/vtrecord.1 lacks \(command.name)")
        }
    }

    /// The documents a user reads: the README and the notes under docs/.
    static func userDocuments() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md"] + docs
    }

    /// swift-argument-parser's own options, which its dump does not list (each is tried below).
    static let parserOwnOptions: Set<String> = ["--generate-completion-script"]

    /// The option reference is the man page (checked above for every option); the README and
    /// docs/ name options in recipes and prose, and every option they name must be one the
    /// binary has, for the command they name it with: a document that names an option the
    /// binary lacks, or a command it does not have, fails here.
    @Test func documentsNameOnlyOptionsAndCommandsTheBinaryHas() throws {
        let tree = try CommandTree.ofBuiltBinary()
        let options = Dictionary(uniqueKeysWithValues: tree.commands.map { ($0.path, $0.options) })
        let everyOption = tree.allOptions.union(Self.parserOwnOptions)
        let completion = try Tools.vtrecord(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && !completion.stdout.isEmpty, "\(completion.stderr)")
        for name in try Self.userDocuments() {
            let mentions = DocumentedCommands.optionMentions(inMarkdown: try Self.document(name), commands: Set(options.keys))
            for mention in mentions {
                if let unknown = mention.unknownCommand {
                    Issue.record("\(name): \(mention) runs 'vtrecord \(unknown)', which is no command of vtrecord")
                    continue
                }
                // `presets show NAME` takes recording options after the name.
                let known = mention.command.map { $0 == ["presets", "show"] ? [] : $0 }
                    .map { (options[$0] ?? []).union(Self.parserOwnOptions) } ?? everyOption
                let missing = mention.options.filter { !known.contains($0) }
                #expect(missing.isEmpty, "\(name): \(mention) names \(missing), which vtrecord\(mention.command.map { " " + $0.joined(separator: " ") } ?? "") does not have")
            }
        }
        // The parse reads the README's recipes and prose: a recipe records with sound, and the
        // prose names options alone.
        let readme = DocumentedCommands.optionMentions(inMarkdown: try Self.document("README.md"), commands: Set(options.keys))
        #expect(readme.contains { $0.command == [] && $0.options.contains("--audio") && $0.options.contains("--device") })
        #expect(readme.contains { $0.command == ["thumbnail"] && $0.options.contains("--tile") })
        #expect(readme.contains { $0.command == nil })
    }

    /// Every link between the documents leads to a file that exists and, with a `#fragment`,
    /// to a heading in it.
    @Test func linksBetweenDocumentsLeadSomewhere() throws {
        var checked = 0
        for name in try Self.userDocuments() {
            let document = Self.root.appendingPathComponent(name)
            for link in Self.links(in: try Self.document(name)) where !link.contains("://") && !link.hasPrefix("mailto:") {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let target = parts[0].isEmpty ? document
                    : URL(fileURLWithPath: String(parts[0]), relativeTo: document.deletingLastPathComponent()).standardizedFileURL
                guard FileManager.default.fileExists(atPath: target.path) else {
                    Issue.record("\(name): the link (\(link)) leads to no file")
                    continue
                }
                if parts.count == 2 {
                    let anchors = Self.headingAnchors(in: try String(contentsOf: target, encoding: .utf8))
                    #expect(anchors.contains(String(parts[1])),
                            "\(name): the link (\(link)) leads to no heading of \(target.lastPathComponent): \(anchors.sorted())")
                }
            }
        }
        #expect(checked > 10, "the documents link to each other; \(checked) links found")
    }

    /// The targets of the Markdown links `[text](target)` outside code.
    static func links(in markdown: String) -> [String] {
        prose(of: markdown).matches(of: /\]\(([^)\s]+)\)/).map { String($0.output.1) }
    }

    /// The fragments GitHub gives a document's headings: lower case, spaces as hyphens, other
    /// punctuation dropped (`## Hardware encoding (VA-API)` → `hardware-encoding-va-api`).
    static func headingAnchors(in markdown: String) -> Set<String> {
        Set(prose(of: markdown).split(separator: "\n").filter { $0.hasPrefix("#") }.map { line in
            let title = line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces).lowercased()
            return String(title.compactMap { c -> Character? in
                if c == " " { return "-" }
                return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
            })
        })
    }

    /// The text outside fenced code blocks, where a `#` line is a heading and not a comment.
    static func prose(of markdown: String) -> String {
        var fenced = false
        return markdown.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.drop(while: { $0 == " " }).hasPrefix("```") {
                fenced.toggle()
                return false
            }
            return !fenced
        }.joined(separator: "\n")
    }

    /// The README is what a newcomer reads first: it stays short, and the rest is in docs/.
    @Test func readmeStaysShort() throws {
        let lines = try Self.document("README.md").split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines < 500, "README.md has \(lines) lines; move reference material to docs/")
    }

    @Test func manPageIsValidMdoc() throws {
        // Every level, style included (long lines, cross references to missing manuals).
        let page = Self.root.appendingPathComponent("man/vtrecord.1").path
        let r = try Tools.run("mandoc", ["-Tlint", page])
        #expect(r.status == 0, "mandoc: \(r.stdoutText) \(r.stderr)")
        // mandoc also notes that the machine's manual database is missing or old; those lines
        // are about the machine, not the page, and only they may appear.
        let aboutThePage = (r.stdoutText + r.stderr).split(separator: "\n").filter { !$0.contains("mandoc.db") }
        #expect(aboutThePage.isEmpty, "mandoc: \(aboutThePage.joined(separator: "\n"))")
    }

    @Test func exitCodesAgreeEverywhere() throws {
        let help = try Tools.vtrecord(["--help"]).stdoutText
        let man = try Self.document("man/vtrecord.1")
        let readme = try Self.document("README.md")
        for code in ["0", "1", "2", "3", "4", "5", "130"] {
            #expect(help.contains("  \(code)  ") || help.contains("  \(code) "), "--help lacks exit code \(code)")
            #expect(man.contains(".It \(code)\n"), "man page lacks exit code \(code)")
            #expect(readme.contains("| \(code) |"), "README lacks exit code \(code)")
        }
    }
}
