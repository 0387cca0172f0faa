import Foundation
import Testing

/// The man page and the README must describe the binary that was built.
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

    /// The README's option reference: a heading per command, a line per option under it, and
    /// no line for an option that command does not have.
    @Test func readmeOptionReferenceHasALineForEveryOption() throws {
        let tree = try CommandTree.ofBuiltBinary()
        let readme = DocumentedCommands.readme(try Self.document("README.md"))
        #expect(!readme.commands.isEmpty, "README.md has no '## Option reference' section with command headings")
        for command in tree.commands {
            // A command that only groups others and has no options of its own needs no heading.
            if command.hasSubcommands && command.documentedOptions.isEmpty && !command.path.isEmpty { continue }
            #expect(readme.commands.contains(command.path),
                    "README.md option reference has no '### `\(command.name)`' heading")
            let documented = readme.options[command.path] ?? []
            let missing = command.documentedOptions.subtracting(documented)
            #expect(missing.isEmpty, "README.md option reference lacks lines under \(command.name) for \(missing.sorted())")
            let unknown = documented.subtracting(command.options)
            #expect(unknown.isEmpty, "README.md option reference lists under \(command.name) options it does not have: \(unknown.sorted())")
        }
        let commands = Set(tree.commands.map(\.path))
        for path in readme.commands where !commands.contains(path) {
            Issue.record("README.md option reference has a heading for vtrecord \(path.joined(separator: " ")), which does not exist")
        }
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
