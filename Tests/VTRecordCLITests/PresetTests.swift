import Foundation
import Testing
import VTTestSupport

/// Presets: the shipped ones work, layering is preset → preset → flag, and a bad preset is
/// refused with its file, line and key before anything is opened or created.
@Suite struct PresetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The shipped preset files, by name.
    static let shipped: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("presets").path)) ?? []
        return files.filter { $0.hasSuffix(".toml") }.map { String($0.dropLast(5)) }.sorted()
    }()

    /// vtrecord with a configuration directory of the test's own, so the user's presets never
    /// take part.
    static func run(_ arguments: [String], config: TemporaryDirectory, cwd: URL? = nil,
                    environment extra: [String: String] = [:]) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config.url.path
        environment.merge(extra) { $1 }
        return try Tools.run(Tools.vtrecord, arguments, cwd: cwd, environment: environment)
    }

    /// Writes a preset into the test's user preset directory (or anywhere, given a path).
    static func write(_ text: String, name: String, in config: TemporaryDirectory) throws -> String {
        let directory = config.url.appendingPathComponent("vtrecord/presets")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("\(name).toml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The values of `presets show` output, key → value text.
    static func values(_ show: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in show.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...]
            if let comment = value.range(of: "  #") { value = value[..<comment.lowerBound] }
            values[key] = value.trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    @Test func everyShippedPresetIsBuiltIn() throws {
        #expect(Self.shipped.count >= 7)
        for required in ["720p30", "1080p30", "1080p30-archive", "low-latency", "low-bandwidth", "1080p30-mjpeg", "vaapi-1080p30"] {
            #expect(Self.shipped.contains(required), "presets/\(required).toml is missing")
        }
        let config = try TemporaryDirectory()
        let r = try Self.run(["presets", "list", "--json"], config: config)
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])
        let builtIn = list.filter { $0["source"] as? String == "builtin" }.compactMap { $0["name"] as? String }.sorted()
        #expect(builtIn == Self.shipped)
        for row in list {
            #expect((row["description"] as? String)?.isEmpty == false, "\(row) has no description")
        }
        // The compiled-in text is the file's text.
        for name in Self.shipped {
            let show = try Self.run(["presets", "show", name], config: config)
            let file = try Self.run(["presets", "show", Self.root.appendingPathComponent("presets/\(name).toml").path], config: config)
            #expect(Self.values(show.stdoutText) == Self.values(file.stdoutText), "built-in \(name) differs from presets/\(name).toml")
        }
    }

    @Test(arguments: shipped)
    func aShippedPresetRecordsTheTestPattern(_ name: String) throws {
        let config = try TemporaryDirectory()
        let show = try Self.run(["presets", "show", name], config: config)
        #expect(show.status == 0, "\(show.stderr)")
        let values = Self.values(show.stdoutText)
        let size = try #require(values["size"]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        let dimensions = size.split(separator: "x").compactMap { Int($0) }

        let va = try FakeVADevice()
        let hardware = values["encoder"] == "\"vaapi\""
        let out = va.file("out.h264")
        let summary = va.file("summary.json")
        var environment: [String: String] = [:]
        var arguments = ["--preset", name, "--test-pattern", "--frames", "30", "-o", out, "--json-summary", summary, "--quiet"]
        if hardware {
            environment = try va.environment()
            arguments += ["--va-device", va.devicePath]
        }
        let r = try Self.run(arguments, config: config, environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        #expect(json["frames_encoded"] as? Int == 30)
        #expect(json["encoder"] as? String == (hardware ? "vaapi" : "x264"))
        // The preset's size and rate apply to the test pattern.
        let format = try #require(json["format"] as? [String: Any])
        #expect([format["width"] as? Int, format["height"] as? Int] == dimensions.map { Optional($0) })
        #expect(format["fps"] as? String == values["fps"])
        #expect(try Tools.counters(out, width: dimensions[0]) == (0..<30).map { $0 })
        if hardware { #expect(try va.report().violations.isEmpty) }
    }

    @Test func aFlagBeatsAPresetWhichBeatsAnEarlierPreset() throws {
        let config = try TemporaryDirectory()
        _ = try Self.write("description = \"A\"\nkeyint = 30\nspeed = \"fast\"\ncrf = 20\n", name: "a", in: config)
        _ = try Self.write("keyint = 60\nbframes = 1\n", name: "b", in: config)

        let layered = try Self.run(["presets", "show", "a", "--preset", "b"], config: config)
        #expect(layered.status == 0, "\(layered.stderr)")
        var values = Self.values(layered.stdoutText)
        #expect(values["keyint"] == "60")
        #expect(values["speed"] == "\"fast\"")
        #expect(values["crf"] == "20")
        #expect(layered.stdoutText.contains("keyint = 60") && layered.stdoutText.contains("# preset b"))

        let flagged = try Self.run(["presets", "show", "a", "--preset", "b", "--keyint", "90", "--speed=veryfast"], config: config)
        #expect(flagged.status == 0, "\(flagged.stderr)")
        values = Self.values(flagged.stdoutText)
        #expect(values["keyint"] == "90")
        #expect(values["speed"] == "\"veryfast\"")
        #expect(values["crf"] == "20")

        // The order of presets matters, not their names.
        let reversed = try Self.run(["presets", "show", "b", "--preset", "a"], config: config)
        #expect(Self.values(reversed.stdoutText)["keyint"] == "30")

        // And recording uses what show printed.
        let dir = try TemporaryDirectory()
        for (arguments, keyint, speed) in [([String](), 60, "fast"), (["--keyint", "10", "--speed", "ultrafast"], 10, "ultrafast")] {
            let r = try Self.run(["--preset", "a", "--preset", "b", "--test-pattern", "--size", "320x240", "--frames", "5",
                                  "-o", dir.path("l.h264"), "--overwrite", "--json-summary", "-", "--quiet"] + arguments,
                                 config: config)
            #expect(r.status == 0, "\(r.stderr)")
            let settings = (try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["settings"] as? [String: Any]
            #expect(settings?["keyint"] as? Int == keyint)
            #expect(settings?["speed"] as? String == speed)
            #expect(settings?["crf"] as? Int == 20)
        }
    }

    @Test func theOutputTemplateNamesThePresets() throws {
        let config = try TemporaryDirectory()
        let mine = try Self.write("speed = \"ultrafast\"\n", name: "mine", in: config)
        let dir = try TemporaryDirectory()
        let r = try Self.run(["--preset", "low-latency", "--preset", mine, "--test-pattern", "--size", "160x120",
                              "--frames", "3", "-o", dir.path("{preset}-{n}.h264"), "--quiet"], config: config)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["low-latency+mine-0.h264"])
    }

    @Test func aSavedShowRecordsTheSame() throws {
        let config = try TemporaryDirectory()
        let show = try Self.run(["presets", "show", "low-latency", "--bitrate", "900k", "--rate-control", "cbr"], config: config)
        #expect(show.status == 0, "\(show.stderr)")
        let saved = try Self.write(show.stdoutText, name: "saved", in: config)
        let again = try Self.run(["presets", "show", saved], config: config)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.values(again.stdoutText) == Self.values(show.stdoutText))
    }

    @Test func aUserPresetOverridesTheShippedOne() throws {
        let config = try TemporaryDirectory()
        let path = try Self.write("description = \"mine\"\nsize = \"320x240\"\n", name: "720p30", in: config)
        let list = try Self.run(["presets", "list"], config: config)
        let line = try #require(list.stdoutText.split(separator: "\n").first { $0.hasPrefix("720p30 ") })
        #expect(line.contains("mine") && line.contains(path) && line.contains("overrides built in"), "\(line)")
        let dir = try TemporaryDirectory()
        let r = try Self.run(["--preset", "720p30", "--test-pattern", "--frames", "3", "-o", dir.path("u.h264"),
                              "--json-summary", "-", "--quiet"], config: config)
        #expect(r.status == 0, "\(r.stderr)")
        let format = (try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["format"] as? [String: Any]
        #expect(format?["width"] as? Int == 320)
    }

    /// A camera preset's size and controls have no meaning for a file: they are left out,
    /// while its encoder settings apply. Given on the command line they are still refused.
    @Test func aCameraPresetServesAFile() throws {
        let config = try TemporaryDirectory()
        _ = try Self.write("size = \"1920x1080\"\nfps = 30\ncontrol = [\"brightness=3\"]\nspeed = \"ultrafast\"\n",
                           name: "cam", in: config)
        let dir = try TemporaryDirectory()
        let clip = dir.path("clip.y4m")
        let made = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25",
                                            "-frames:v", "10", "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let r = try Self.run(["--preset", "cam", "--input", clip, "-o", dir.path("c.h264"), "--json-summary", "-", "--quiet"],
                             config: config)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        #expect((json?["format"] as? [String: Any])?["width"] as? Int == 176)
        // The file keeps its own rate: the preset's 30 fps would retime it.
        #expect((json?["format"] as? [String: Any])?["fps"] as? String == "25")
        #expect((json?["settings"] as? [String: Any])?["speed"] as? String == "ultrafast")
        let show = try Self.run(["presets", "show", "cam", "--input", clip], config: config)
        #expect(Self.values(show.stdoutText)["size"] == nil && Self.values(show.stdoutText)["control"] == nil
                && Self.values(show.stdoutText)["fps"] == nil)
        let typed = try Self.run(["--preset", "cam", "--input", clip, "--size", "640x480", "-o", dir.path("d.h264")], config: config)
        #expect(typed.status == 2 && typed.stderr.contains("--size applies to a camera or the test pattern"), "\(typed.stderr)")
    }

    /// What a preset turned on, the command line can turn off, and a source named on the
    /// command line replaces the preset's; a value starting with "-" is a value.
    @Test func theCommandLineUndoesAPresetsFlagsAndSource() throws {
        let config = try TemporaryDirectory()
        _ = try Self.write("test-pattern = true\nquiet = true\noverwrite = true\nsize = \"160x120\"\noutput = \"-dash.h264\"\n",
                           name: "loud", in: config)
        let dir = try TemporaryDirectory()
        let show = try Self.run(["presets", "show", "loud", "--no-quiet", "--no-overwrite"], config: config)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(Self.values(show.stdoutText)["quiet"] == "false" && Self.values(show.stdoutText)["overwrite"] == "false")

        let recorded = try Self.run(["--preset", "loud", "--frames", "3", "--no-quiet"], config: config, cwd: dir.url)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        #expect(recorded.stderr.contains("wrote 3 frames"), "\(recorded.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.path("-dash.h264")))

        let clip = dir.path("clip.y4m")
        let made = try Tools.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25",
                                            "-frames:v", "4", "-pix_fmt", "yuv420p", clip])
        try #require(made.status == 0, "\(made.stderr)")
        let file = try Self.run(["--preset", "loud", "--input", clip, "-o", dir.path("f.h264"), "--json-summary", "-"],
                                config: config)
        #expect(file.status == 0, "\(file.stderr)")
        let json = try JSONSerialization.jsonObject(with: file.stdout) as? [String: Any]
        #expect(json?["input"] as? String == clip && json?["frames_encoded"] as? Int == 4)
    }

    struct BadPreset: CustomTestStringConvertible, Sendable {
        let what: String
        let text: String
        /// Text the error must contain, after the file's path.
        let location: String
        let mentions: String
        var testDescription: String { what }
    }

    static let badPresets = [
        BadPreset(what: "unknown key", text: "description = \"x\"\nfps = 30\nsizee = \"640x480\"\n",
                  location: ":3: sizee: unknown key", mentions: "did you mean 'size'?"),
        BadPreset(what: "unknown key, nothing near", text: "fps = 30\nzzzzzzzz = 1\n",
                  location: ":2: zzzzzzzz: unknown key. Keys are", mentions: "long names"),
        BadPreset(what: "wrong type", text: "fps = 30\n\ntest-pattern = \"yes\"\n",
                  location: ":3: test-pattern:", mentions: "takes true or false, not a string"),
        BadPreset(what: "wrong type in a list", text: "control = \"brightness=1\"\n",
                  location: ":1: control:", mentions: "takes an array of strings"),
        BadPreset(what: "bad value", text: "# comment\nsize = \"big\"\n",
                  location: ":2: size:", mentions: "'big' is invalid for '--size"),
        BadPreset(what: "out of range", text: "fps = 30\ncrf = 99\n", location: ":2: crf:", mentions: "--crf 99.0 is out of range"),
        BadPreset(what: "a combination", text: "rate-control = \"cbr\"\n", location: ":1: rate-control:", mentions: "--bitrate"),
        BadPreset(what: "bad TOML", text: "fps = 30\nsize = \"1280x720\n", location: ":2: not valid TOML", mentions: "Error while parsing"),
        BadPreset(what: "a table", text: "[encoder]\nspeed = \"fast\"\n", location: ":1: encoder:", mentions: "not a table"),
        BadPreset(what: "the no- half of a flag", text: "no-reconnect = true\n", location: ":1: no-reconnect:",
                  mentions: "write reconnect = false"),
        BadPreset(what: "the no- form of realtime", text: "no-realtime = true\n", location: ":1: no-realtime:",
                  mentions: "write realtime = \"off\""),
        BadPreset(what: "a mode realtime lacks", text: "realtime = \"sometimes\"\n", location: ":1: realtime:",
                  mentions: "'sometimes' is invalid for '--realtime"),
        BadPreset(what: "a boolean for an option", text: "speed = true\n", location: ":1: speed:",
                  mentions: "takes a string or a number, not a boolean"),
        BadPreset(what: "a key after a multi-line string", text: "description = \"\"\"\nNotes:\nfps = 30\n\"\"\"\nfps = \"abc\"\n",
                  location: ":5: fps:", mentions: "'abc' is invalid"),
        BadPreset(what: "a quoted key with a dot", text: "fps = 30\n\"si.ze\" = 1\n", location: ":2: si.ze: unknown key",
                  mentions: "Keys are"),
        BadPreset(what: "an output vtrecord cannot write", text: "fps = 30\noutput = \"take-{n}.h1e309\"\n",
                  location: ":2: output:", mentions: "--container h264|mp4|mkv|ts"),
    ]

    @Test(arguments: badPresets)
    func aBadPresetExitsTwoWithFileLineAndKeyAndCreatesNothing(_ bad: BadPreset) throws {
        let config = try TemporaryDirectory()
        let cwd = try TemporaryDirectory()
        let path = cwd.path("bad.toml")
        try Data(bad.text.utf8).write(to: URL(fileURLWithPath: path))
        // No -o: the default output name would appear in the working directory.
        let r = try Self.run(["--preset", path, "--test-pattern", "--frames", "3", "--json-summary", "summary.json",
                              "--timestamps", "times.txt"], config: config, cwd: cwd.url)
        #expect(r.status == 2, "exit \(r.status): \(r.stderr)")
        #expect(r.stderr.contains(path + bad.location), "\(r.stderr)")
        #expect(r.stderr.contains(bad.mentions), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "one line, not \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd.url.path) == ["bad.toml"])
        // The same preset found by name says where it was found.
        let named = try Self.write(bad.text, name: "bad", in: config)
        let byName = try Self.run(["presets", "show", "bad"], config: config)
        #expect(byName.status == 2)
        #expect(byName.stderr.contains(named + bad.location), "\(byName.stderr)")
        #expect(byName.stderr.split(separator: "\n").count == 1, "one line, not \(byName.stderr)")
    }

    @Test func anUnknownPresetNameSuggestsTheNearest() throws {
        let config = try TemporaryDirectory()
        let cwd = try TemporaryDirectory()
        let r = try Self.run(["--preset", "720p3", "--test-pattern", "--frames", "3"], config: config, cwd: cwd.url)
        #expect(r.status == 2)
        #expect(r.stderr.contains("did you mean 720p30?") && r.stderr.contains("low-latency"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd.url.path).isEmpty)
        let missing = try Self.run(["--preset", cwd.path("nowhere.toml"), "--test-pattern"], config: config, cwd: cwd.url)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nowhere.toml: cannot read it: No such file or directory"), "\(missing.stderr)")
    }

    /// Control names can only be checked against the camera: after it is open, before it
    /// streams and before the output exists — and the error still names the preset's line.
    @Test func aPresetControlTheCameraLacksIsRefusedBeforeTheOutputExists() throws {
        let config = try TemporaryDirectory()
        let camera = try FakeCamera()
        let path = try Self.write("size = \"640x480\"\ncontrol = [\"brightness=10\", \"brightnes=3\"]\n", name: "cam", in: config)
        let out = camera.file("never.h264")
        let r = try Self.run(["--preset", "cam", "--device", camera.path, "--frames", "3", "-o", out], config: config,
                             environment: try camera.environment())
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("\(path):2: control: --control brightnes=3"), "\(r.stderr)")
        #expect(r.stderr.contains("did you mean brightness?"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let report = try camera.report()
        #expect(report.releasedEverything, "\(report)")
    }
}
