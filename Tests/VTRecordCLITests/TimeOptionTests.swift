import Foundation
import Testing

/// Every option that takes a time, found in the parser's own description of the commands
/// (`--experimental-dump-help`): a negative time is refused with one line naming the value,
/// the option and what to give instead, exit 2, whether typed `--option -1s`, `--option=-1s`
/// or set in a preset. swift-argument-parser by itself takes `-1s` for an option and answers
/// "Missing value". So is a negative number given to an option that takes a count, a
/// quality, a rate or a size.
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
        try options { $0.contains("time") || $0.contains("times") }
    }

    /// The options whose value is a number that cannot be negative: counts, qualities, rates,
    /// sizes.
    static func numberOptions() throws -> [TimeOption] {
        try options { $0.count == 1 && ["n", "Hz", "q", "qp", "rate", "bytes"].contains($0[0]) }
    }

    /// The options, per command, whose value name (split at `|`) `matches`.
    static func options(_ matches: ([String]) -> Bool) throws -> [TimeOption] {
        let dump = try Tools.vtrecord(["--experimental-dump-help"])
        try #require(dump.status == 0, "\(dump.stderr)")
        let root = try #require((try JSONSerialization.jsonObject(with: dump.stdout) as? [String: Any])?["command"] as? [String: Any])
        var found: [TimeOption] = []
        func walk(_ command: [String: Any], path: [String]) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard argument["kind"] as? String == "option",
                      let valueName = argument["valueName"] as? String,
                      matches(valueName.split(separator: "|").map(String.init)),
                      let names = argument["names"] as? [[String: Any]],
                      let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String
                else { continue }
                found.append(TimeOption(command: path, name: "--\(long)"))
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                guard let name = sub["commandName"] as? String, name != "help" else { continue }
                // The default subcommand (`record`) is run without its name, as users do.
                walk(sub, path: name == command["defaultSubcommand"] as? String ? path : path + [name])
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
        try Self.expectEachRefuses("-1s", options: try Self.timeOptions()) { error, option in
            error.contains("'-1s'") && error.contains(option.name) && error.contains("negative")
        }
    }

    /// Gives each option `value`, typed `--option value` and `--option=value`, with what its
    /// command needs, and expects exit 2, one error line that `says` what it must, no
    /// "Missing value", and nothing written.
    static func expectEachRefuses(_ value: String, options: [TimeOption],
                                  says: (String, TimeOption) -> Bool) throws {
        for option in options {
            let operands = try #require(operands[option.command.joined(separator: " ")],
                                        "\(option.testDescription): say what the command needs in operands")
                + (companions[option.name] ?? [])
            for spelling in [[option.name, value], ["\(option.name)=\(value)"]] {
                let dir = try TemporaryDirectory()
                let r = try Tools.vtrecord(option.command + operands + spelling, cwd: dir.url)
                let said = "\(spelling.joined(separator: " ")): \(r.stderr)"
                #expect(r.status == 2, "\(said)")
                let errors = OutputTests.errorLines(r.stderr)
                #expect(errors.count == 1 && says(String(errors[0]), option), "\(said)")
                #expect(!r.stderr.contains("Missing value"), "\(said)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty, "\(said)")
            }
        }
    }

    /// What an option needs beside it before its value is judged.
    static let companions: [String: [String]] = [
        "--max-files": ["--segment-time", "1s", "-o", "out-{n}.mp4"],
        "--audio-rate": ["--audio", "hw:9"], "--audio-channels": ["--audio", "hw:9"], "--audio-bitrate": ["--audio", "hw:9"],
        "--http-mjpeg-fps": ["--http", "127.0.0.1:0"], "--live-bitrate": ["--http", "127.0.0.1:0"],
    ]

    @Test func theScanFindsTheNumberOptions() throws {
        let found = Set(try Self.numberOptions().map(\.testDescription))
        for expected in ["vtrecord --frames", "vtrecord --max-files", "vtrecord --bitrate", "vtrecord --crf",
                         "vtrecord --audio-rate", "vtrecord --fps", "vtrecord thumbnail --count", "vtrecord snapshot --skip"] {
            #expect(found.contains(expected), "\(found.sorted())")
        }
    }

    /// A negative number: the option's own range in one line, as for any value out of it, not
    /// swift-argument-parser's "Missing value".
    @Test func aNegativeNumberIsRefusedByEveryNumberOption() throws {
        try Self.expectEachRefuses("-1", options: try Self.numberOptions()) { error, option in
            error.contains(option.name) && !error.contains("applies to")
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
