import Foundation
import Testing

/// The binary as scripts see it: help, version, exit codes, messages that name the option.
@Suite struct CommandLineTests {
    @Test func helpListsOptionsAndExitCodes() throws {
        let r = try Tools.vtrecord(["--help"])
        #expect(r.status == 0)
        for needle in ["--input", "--test-pattern", "--keyint", "--rate-control", "--json-summary",
                       "EXIT STATUS", "130", "inspect"] {
            #expect(r.stdoutText.contains(needle), "--help does not mention \(needle)")
        }
    }

    /// Recording is the `record` command and the default one: named or not, the same options
    /// record the same file, and `record --help` lists the recording options without the
    /// other commands.
    @Test func recordIsTheDefaultCommand() throws {
        let help = try Tools.vtrecord(["record", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdoutText.contains("--test-pattern") && help.stdoutText.contains("--keyint"))
        #expect(!help.stdoutText.contains("SUBCOMMANDS") && !help.stdoutText.contains("vtrecord inspect"), "\(help.stdoutText)")
        let dir = try TemporaryDirectory()
        let arguments = ["--test-pattern", "--size", "64x64", "--frames", "3", "--quiet"]
        let plain = try Tools.vtrecord(arguments + ["-o", "plain.h264"], cwd: dir.url)
        let named = try Tools.vtrecord(["record"] + arguments + ["-o", "named.h264", "--preset", "low-latency"], cwd: dir.url)
        #expect(plain.status == 0 && named.status == 0, "\(plain.stderr) \(named.stderr)")
        for name in ["plain.h264", "named.h264"] {
            let probe = try Tools.ffprobe(dir.url.appendingPathComponent(name).path,
                                          ["-count_frames", "-show_entries", "stream=nb_read_frames"])
            let frames = (probe["streams"] as? [[String: Any]])?.first?["nb_read_frames"] as? String
            #expect(frames == "3", "\(name): \(probe)")
        }
        // A command's mistake points to that command's help.
        let bad = try Tools.vtrecord(["remux", "--no-such-option"])
        #expect(bad.status == 2 && bad.stderr.contains("vtrecord help remux"), "\(bad.stderr)")
    }

    @Test func versionPrintsOneLine() throws {
        let r = try Tools.vtrecord(["--version"])
        #expect(r.status == 0)
        #expect(r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1)
        #expect(r.stdoutText.first?.isNumber == true)
    }

    struct BadUsage: CustomTestStringConvertible, Sendable {
        let arguments: [String]
        /// Text the one-line error must contain (the option it is about).
        let mentions: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let badUsages: [BadUsage] = [
        BadUsage(arguments: ["--test-pattern", "--size", "big"], mentions: "--size"),
        BadUsage(arguments: ["--test-pattern", "--fps", "fast"], mentions: "--fps"),
        BadUsage(arguments: ["--test-pattern", "--bitrate", "lots"], mentions: "--bitrate"),
        BadUsage(arguments: ["--test-pattern", "--duration", "forever"], mentions: "--duration"),
        BadUsage(arguments: ["--test-pattern", "--keyint", "0"], mentions: "--keyint"),
        BadUsage(arguments: ["--test-pattern", "--crf", "99"], mentions: "--crf"),
        BadUsage(arguments: ["--test-pattern", "--speed", "turbo"], mentions: "--speed"),
        BadUsage(arguments: ["--test-pattern", "--tune", "cinema"], mentions: "--tune"),
        BadUsage(arguments: ["--test-pattern", "--profile", "extended"], mentions: "--profile"),
        BadUsage(arguments: ["--test-pattern", "--level", "7.5"], mentions: "--level"),
        BadUsage(arguments: ["--test-pattern", "--profile", "baseline", "--bframes", "2"], mentions: "--bframes"),
        BadUsage(arguments: ["--test-pattern", "--profile", "baseline", "--entropy", "cabac"], mentions: "--entropy cabac"),
        BadUsage(arguments: ["--test-pattern", "--rate-control", "cbr", "--bitrate", "1M", "--crf", "20"], mentions: "--crf"),
        BadUsage(arguments: ["--test-pattern", "--rate-control", "vbr", "--bitrate", "2M"], mentions: "--max-bitrate"),
        BadUsage(arguments: ["--test-pattern", "--rate-control", "abr"], mentions: "--bitrate"),
        BadUsage(arguments: ["--test-pattern", "-o", "-", "--json-summary", "-"], mentions: "--json-summary"),
        BadUsage(arguments: ["--test-pattern", "--input", "x.y4m"], mentions: "--input"),
        BadUsage(arguments: ["--test-pattern", "--no-such-option"], mentions: "--no-such-option"),
        BadUsage(arguments: ["--device", "/dev/video9", "--test-pattern"], mentions: "--device and --test-pattern"),
        BadUsage(arguments: ["--test-pattern", "--buffers", "1"], mentions: "--buffers"),
        BadUsage(arguments: ["--test-pattern", "--buffers", "33"], mentions: "--buffers must be 3 to 32"),
        BadUsage(arguments: ["--test-pattern", "--buffers", "2"], mentions: "--buffers must be 3 to 32"),
        BadUsage(arguments: ["--test-pattern", "--format", "rgb24"], mentions: "--format"),
    ]

    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/video0"), "needs a machine without a camera"))
    func noSourceAndNoCameraExitsThreeWithAHint() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--frames", "1"], cwd: dir.url)
        #expect(r.status == 3, "exit \(r.status): \(r.stderr)")
        #expect(r.stderr.contains("/dev/video0") && r.stderr.contains("--test-pattern"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    @Test(arguments: badUsages)
    func badUsageExitsTwoNamingTheOption(_ bad: BadUsage) throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(bad.arguments + ["--frames", "1"], cwd: dir.url)
        #expect(r.status == 2, "exit \(r.status): \(r.stderr)")
        #expect(r.stderr.contains(bad.mentions), "message does not name \(bad.mentions): \(r.stderr)")
        #expect(r.stdout.isEmpty)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(leftovers.isEmpty, "a refused run created \(leftovers)")
    }

    @Test func existingOutputIsKeptWithoutOverwrite() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("keep.h264")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "5", "-o", path])
        #expect(r.status == 5)
        #expect(r.stderr.contains("already exists") && r.stderr.contains("--overwrite"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")

        let again = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "5", "-o", path,
                                        "--overwrite", "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Tools.frameMD5s(path).count == 5)
    }

    @Test func defaultOutputNameIsAnnounced() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "3"], cwd: dir.url)
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(files.count == 1)
        let name = try #require(files.first)
        #expect(name.range(of: #"^vtrecord-\d{8}-\d{6}\.h264$"#, options: .regularExpression) != nil)
        #expect(r.stderr.contains(name))
    }

    @Test func jsonSummaryHasTheDocumentedFields() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--fps", "25", "--frames", "30",
                                    "--keyint", "10", "-o", dir.path("s.h264"), "--json-summary", "-", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        #expect(json["schema"] as? Int == 1)
        #expect(json["encoder"] as? String == "x264")
        #expect(json["frames_captured"] as? Int ?? 0 >= 30)
        #expect(json["frames_encoded"] as? Int == 30)
        #expect(json["keyframes"] as? Int == 3)
        let bytes = try #require(json["bytes"] as? Int)
        let size = try FileManager.default.attributesOfItem(atPath: dir.path("s.h264"))[.size] as? Int
        #expect(bytes == size)
        #expect(json["seconds"] is Double || json["seconds"] is Int)
        #expect(json["encode_fps"] is Double || json["encode_fps"] is Int)
        #expect(json["bitrate"] as? Int == Int((Double(bytes) * 8 / (30.0 / 25.0)).rounded()))
        let settings = try #require(json["settings"] as? [String: Any])
        #expect(settings["keyint"] as? Int == 10)
        #expect(settings["rate_control"] as? String == "crf")
        #expect(settings["speed"] as? String == "medium")
        #expect(settings["bframes"] as? Int == 3)
    }
}
