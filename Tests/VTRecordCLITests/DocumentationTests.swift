import Foundation
import Testing

/// The man page and the README must describe the binary that was built.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func longOptions(inHelpOf arguments: [String]) throws -> Set<String> {
        let help = try Tools.vtrecord(arguments)
        let matches = help.stdoutText.matches(of: /--[a-z][a-z0-9-]+/).map { String($0.output) }
        return Set(matches)
    }

    @Test func manPageAndReadmeCoverEveryOption() throws {
        var options = try Self.longOptions(inHelpOf: ["--help"])
        for command in [["inspect"], ["devices"], ["formats"], ["controls"], ["encoders"], ["presets", "list"], ["presets", "show"], ["batch"]] {
            options.formUnion(try Self.longOptions(inHelpOf: ["help"] + command))
        }
        #expect(options.contains("--input") && options.contains("--json-summary") && options.contains("--control"))
        let man = try String(contentsOf: Self.root.appendingPathComponent("man/vtrecord.1"), encoding: .utf8)
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        for option in options.subtracting(["--help", "--version"]) {
            let name = String(option.dropFirst(2))
            #expect(man.contains("Fl -\(name)"), "man/vtrecord.1 does not document \(option)")
            #expect(readme.contains(option), "README.md does not mention \(option)")
        }
    }

    @Test func manPageAndReadmeCoverEveryCommand() throws {
        let help = try Tools.vtrecord(["--help"]).stdoutText
        let listed = help.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        let commands = listed.matches(of: #/\n  ([a-z]+) /#).map { String($0.output.1) }.filter { $0 != "help" }
        #expect(Set(commands) == ["devices", "formats", "controls", "encoders", "inspect", "presets", "batch"], "\(listed)")
        let man = try String(contentsOf: Self.root.appendingPathComponent("man/vtrecord.1"), encoding: .utf8)
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        for command in commands {
            #expect(man.contains(".It Cm \(command)"), "man/vtrecord.1 does not describe \(command)")
            #expect(readme.contains("vtrecord \(command)"), "README.md does not mention \(command)")
        }
    }

    @Test func manPageIsValidMdoc() throws {
        let r = try Tools.run("mandoc", ["-Tlint", "-Wwarning", Self.root.appendingPathComponent("man/vtrecord.1").path])
        #expect(r.status == 0, "mandoc: \(r.stdoutText) \(r.stderr)")
    }

    @Test func exitCodesAgreeEverywhere() throws {
        let help = try Tools.vtrecord(["--help"]).stdoutText
        let man = try String(contentsOf: Self.root.appendingPathComponent("man/vtrecord.1"), encoding: .utf8)
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        for code in ["0", "1", "2", "3", "4", "5", "130"] {
            #expect(help.contains("  \(code)  ") || help.contains("  \(code) "), "--help lacks exit code \(code)")
            #expect(man.contains(".It \(code)\n"), "man page lacks exit code \(code)")
            #expect(readme.contains("| \(code) |"), "README lacks exit code \(code)")
        }
    }
}
