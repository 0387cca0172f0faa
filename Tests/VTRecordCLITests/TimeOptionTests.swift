import Foundation
import Testing

/// Every option that takes a time, found in the parser's own description of the commands
/// (`--experimental-dump-help`): a negative time is refused with one line naming the value,
/// the option and what to give instead, exit 2, whether typed `--option -1s`, `--option=-1s`
/// or set in a preset. swift-argument-parser by itself takes `-1s` for an option and answers
/// "Missing value".
@Suite struct TimeOptionTests {
    struct TimeOption: CustomTestStringConvertible, Sendable {
        var command: [String]
        var name: String
        var testDescription: String { (["vtrecord"] + command + [name]).joined(separator: " ") }
    }

    /// What each command needs besides the option to get as far as reading it.
    static let operands: [String: [String]] = [
        "": ["--test-pattern", "--frames", "1", "-o", "out.mp4"],
        "remux": ["in.mp4", "-o", "out.mkv"],
        "thumbnail": ["in.mp4"],
        "snapshot": [],
    ]

    /// The options whose value is a time (value names `time`, `times`, `n|time`), per command.
    static func timeOptions() throws -> [TimeOption] {
        let dump = try Tools.vtrecord(["--experimental-dump-help"])
        try #require(dump.status == 0, "\(dump.stderr)")
        let root = try #require((try JSONSerialization.jsonObject(with: dump.stdout) as? [String: Any])?["command"] as? [String: Any])
        var found: [TimeOption] = []
        func walk(_ command: [String: Any], path: [String]) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard argument["kind"] as? String == "option",
                      let valueName = argument["valueName"] as? String,
                      valueName.split(separator: "|").contains(where: { $0 == "time" || $0 == "times" }),
                      let names = argument["names"] as? [[String: Any]],
                      let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String
                else { continue }
                found.append(TimeOption(command: path, name: "--\(long)"))
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                guard let name = sub["commandName"] as? String, name != "help" else { continue }
                walk(sub, path: path + [name])
            }
        }
        walk(root, path: [])
        return found
    }

    @Test func theScanFindsTheTimeOptions() throws {
        let found = Set(try Self.timeOptions().map(\.testDescription))
        for expected in ["vtrecord --duration", "vtrecord --fragment-duration", "vtrecord --segment-time",
                         "vtrecord --snapshot-every", "vtrecord --keyint", "vtrecord remux --fragment-duration",
                         "vtrecord thumbnail --at", "vtrecord thumbnail --every", "vtrecord snapshot --timeout"] {
            #expect(found.contains(expected), "\(found.sorted())")
        }
    }

    @Test func aNegativeTimeIsRefusedByEveryTimeOption() throws {
        let options = try Self.timeOptions()
        for option in options {
            let operands = try #require(Self.operands[option.command.joined(separator: " ")],
                                        "\(option.testDescription): say what the command needs in operands")
            for spelling in [[option.name, "-1s"], ["\(option.name)=-1s"]] {
                let dir = try TemporaryDirectory()
                let r = try Tools.vtrecord(option.command + operands + spelling, cwd: dir.url)
                let said = "\(spelling.joined(separator: " ")): \(r.stderr)"
                #expect(r.status == 2, "\(said)")
                let errors = OutputTests.errorLines(r.stderr)
                #expect(errors.count == 1, "\(said)")
                #expect(errors.first.map { $0.contains("'-1s'") && $0.contains(option.name) && $0.contains("negative") } == true, "\(said)")
                #expect(!r.stderr.contains("Missing value"), "\(said)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty, "\(said)")
            }
        }
    }

    /// A preset's negative time: the same message, with the preset's file and line.
    @Test func aNegativeTimeInAPresetNamesItsLine() throws {
        let dir = try TemporaryDirectory()
        let preset = dir.path("short.toml")
        try "# fragments\nfragment-duration = \"-1s\"\n".write(toFile: preset, atomically: true, encoding: .utf8)
        let r = try Tools.vtrecord(["--preset", preset, "--test-pattern", "--frames", "1", "-o", dir.path("out.mp4")])
        #expect(r.status == 2, "\(r.stderr)")
        let errors = OutputTests.errorLines(r.stderr)
        #expect(errors.count == 1 && errors[0].contains("short.toml:2") && errors[0].contains("'-1s'")
                && errors[0].contains("negative"), "\(r.stderr)")
    }
}
