import Foundation
import Testing
import VTTestSupport

/// `--realtime adaptive|drop|off`: what the command line and presets say reaches the recording,
/// `--realtime` alone and the presets written when it was a flag included.
@Suite struct RealTimeOptionTests {
    /// The summary of a short recording of the test pattern (or `input`) with `arguments`.
    static func summary(_ arguments: [String], input: [String] = ["--test-pattern", "--size", "160x96"],
                        directory: TemporaryDirectory) throws -> [String: Any] {
        let r = try Tools.vtrecord(input + ["--frames", "10", "--speed", "veryfast", "-o", directory.path("out.h264"),
                                            "--overwrite", "--quiet", "--json-summary", "-"] + arguments)
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
    }

    static func mode(_ summary: [String: Any]) -> String? {
        (summary["settings"] as? [String: Any])?["realtime_mode"] as? String
    }

    @Test(arguments: [
        (["--realtime", "adaptive"], "adaptive"), (["--realtime"], "adaptive"), (["--realtime", "--quiet"], "adaptive"),
        (["--realtime=drop"], "drop"), (["--realtime", "drop"], "drop"), (["--realtime", "off"], "off"),
        (["--no-realtime"], "off"), ([], "off"), (["--no-realtime", "--realtime", "drop"], "drop"),
        (["--realtime", "drop", "--no-realtime"], "off"),
    ])
    func theModeGivenIsTheModeRecorded(_ arguments: [String], _ expected: String) throws {
        let directory = try TemporaryDirectory()
        let summary = try Self.summary(arguments, directory: directory)
        #expect(Self.mode(summary) == expected, "\(arguments): \(summary)")
        let settings = try #require(summary["settings"] as? [String: Any])
        #expect(settings["realtime"] as? Bool == (expected != "off"))
        // Only an adapting recording reports its speeds: --speed and every faster preset.
        let speed = summary["speed"] as? [String: Any]
        #expect((speed != nil) == (expected == "adaptive"), "\(summary)")
        if let speed {
            #expect(speed["steps"] as? [String] == ["veryfast", "superfast"])
            #expect(speed["slowest"] as? String == "veryfast")
        }
    }

    @Test func aFileIsNeverAdaptedUnlessAskedTo() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        let made = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25",
                                            "-frames:v", "10", "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let file = try Self.summary([], input: ["--input", clip], directory: directory)
        #expect(Self.mode(file) == "off" && file["speed"] == nil, "\(file)")
        let asked = try Self.summary(["--realtime"], input: ["--input", clip], directory: directory)
        #expect(Self.mode(asked) == "adaptive" && asked["speed"] != nil, "\(asked)")
    }

    @Test func anUnknownModeIsRefusedNamingTheModes() throws {
        let r = try Tools.vtrecord(["--test-pattern", "--realtime", "sometimes", "-o", "/dev/null"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("'sometimes' is invalid for '--realtime"), "\(r.stderr)")
        #expect(r.stderr.contains("adaptive") && r.stderr.contains("drop") && r.stderr.contains("off"), "\(r.stderr)")
    }

    @Test(arguments: [("realtime = \"drop\"", "drop"), ("realtime = \"adaptive\"", "adaptive"),
                      ("realtime = true", "adaptive"), ("realtime = false", "off")])
    func presetsTakeTheModesAndTheBooleansOfOldPresets(_ line: String, _ expected: String) throws {
        let directory = try TemporaryDirectory()
        let preset = directory.path("live.toml")
        try "\(line)\n".write(toFile: preset, atomically: true, encoding: .utf8)
        let summary = try Self.summary(["--preset", preset], directory: directory)
        #expect(Self.mode(summary) == expected, "\(line): \(summary)")
        // The command line wins over the preset.
        let other = expected == "drop" ? "off" : "drop"
        let overridden = try Self.summary(["--preset", preset, "--realtime", other], directory: directory)
        #expect(Self.mode(overridden) == other)
    }
}
