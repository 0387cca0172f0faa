import Foundation
import Testing

/// Recordings with sound, from the test pattern and its test beep: the beeps must start where
/// the picture flashes, in every container and codec, as FFmpeg decodes them; other readers
/// (mkvmerge, mediainfo) must name the codec, rate and channels; the sound must end with the
/// picture; and what cannot carry sound is refused with one line.
@Suite struct SoundRecordingTests {
    /// The test pattern with the test sound for `seconds`, into `name` with `extra` options.
    private func record(_ name: String, seconds: Int = 4, fps: String = "30", _ extra: [String] = [],
                        in dir: TemporaryDirectory) throws -> String {
        let path = dir.path(name)
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--fps", fps, "--duration", "\(seconds)s",
                                    "--audio", "test", "--quiet", "-o", path] + extra)
        try #require(r.status == 0, "vtrecord: \(r.stderr)")
        return path
    }

    /// Sync at start and all along: each flash's beep starts within 10 ms of the flash frame's
    /// presentation time (the priming of AAC and Opus accounted for by the container), and the
    /// sound ends within 20 ms of the picture.
    @Test(arguments: [("mp4", "aac"), ("mp4", "opus"), ("mkv", "opus"), ("mkv", "aac"), ("mkv", "pcm"), ("ts", "aac")])
    func beepsStartWithTheirFlashes(container: String, codec: String) throws {
        let dir = try TemporaryDirectory()
        let file = try record("sync.\(container)", ["--audio-codec", codec], in: dir)
        let sync = try SoundSync.measure(file)
        #expect(sync.flashes.count == 4, "flashes at \(sync.flashes)")
        let offsets = sync.offsets()
        #expect(offsets.count == sync.flashes.count)
        for (flash, offset) in zip(sync.flashes, offsets) {
            let found = try #require(offset, "no beep near the flash at \(flash) s: onsets \(sync.onsets)")
            #expect(abs(found) <= 0.010, "\(container)/\(codec): the beep of the flash at \(flash) s is \(found * 1000) ms off")
        }
        #expect(abs(sync.audioEnd - sync.videoEnd) <= 0.020,
                "\(container)/\(codec): sound ends at \(sync.audioEnd) s, picture at \(sync.videoEnd) s")
    }

    /// A rate that is not a whole number: the flash frame is the first at or after each second,
    /// and its beep starts with it, not on the second.
    @Test func fractionalFrameRateKeepsTheBeepOnItsFrame() throws {
        let dir = try TemporaryDirectory()
        let file = try record("ntsc.mkv", seconds: 3, fps: "30000/1001", in: dir)
        let sync = try SoundSync.measure(file)
        #expect(sync.flashes.count == 3)
        // Frame 30 (1.001 s) and 60 (2.002 s): the first frames at or after 1 s and 2 s.
        #expect(sync.flashes.dropFirst().map { ($0 * 1000).rounded() } == [1001, 2002])
        for offset in sync.offsets() {
            #expect(try abs(#require(offset)) <= 0.010)
        }
    }

    /// Readers we did not write name the sound as it was asked for.
    @Test func mkvmergeAndMediainfoIdentifyTheSound() throws {
        let dir = try TemporaryDirectory()
        let opus = try record("opus.mkv", seconds: 2, ["--audio-channels", "1"], in: dir)
        let pcm = try record("pcm.mkv", seconds: 2, ["--audio-codec", "pcm", "--audio-rate", "44100"], in: dir)
        for (file, codec, rate, channels) in [(opus, "Opus", 48_000, 1), (pcm, "PCM", 44_100, 2)] {
            let r = try Tools.run("mkvmerge", ["-J", file])
            try #require(r.status == 0, "mkvmerge: \(r.stdoutText)")
            let json = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
            let tracks = json["tracks"] as? [[String: Any]] ?? []
            let audio = try #require(tracks.first { $0["type"] as? String == "audio" }, "no audio track in \(tracks)")
            #expect((audio["codec"] as? String)?.contains(codec) == true, "\(audio)")
            let properties = audio["properties"] as? [String: Any] ?? [:]
            #expect(properties["audio_sampling_frequency"] as? Int == rate)
            #expect(properties["audio_channels"] as? Int == channels)
            #expect(tracks.contains { $0["type"] as? String == "video" })
        }
        let mp4 = try record("aac.mp4", seconds: 2, ["--audio-bitrate", "96k"], in: dir)
        let ts = try record("aac.ts", seconds: 2, ["--audio-rate", "44100"], in: dir)
        for (file, rate) in [(mp4, "48000"), (ts, "44100")] {
            let r = try Tools.run("mediainfo", ["--Output=JSON", file])
            try #require(r.status == 0)
            let json = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
            let tracks = (json["media"] as? [String: Any])?["track"] as? [[String: Any]] ?? []
            let audio = try #require(tracks.first { $0["@type"] as? String == "Audio" }, "\(file): \(tracks)")
            #expect(audio["Format"] as? String == "AAC", "\(audio)")
            #expect(audio["SamplingRate"] as? String == rate, "\(audio)")
            #expect(audio["Channels"] as? String == "2", "\(audio)")
        }
    }

    /// The summary's `audio` object says what was recorded.
    @Test func summaryDescribesTheSound() throws {
        let dir = try TemporaryDirectory()
        let summary = dir.path("summary.json")
        _ = try record("s.mkv", seconds: 2, ["--json-summary", summary, "--audio-codec", "aac"], in: dir)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        let audio = try #require(json["audio"] as? [String: Any])
        #expect(audio["device"] as? String == "test")
        #expect(audio["codec"] as? String == "aac")
        #expect(audio["rate"] as? Int == 48_000)
        #expect(audio["channels"] as? Int == 2)
        #expect(audio["bitrate"] as? Int == 128_000)
        #expect(audio["samples"] as? Int == 96_000)
        #expect(audio["gaps"] as? Int == 0)
        #expect(audio["xruns"] as? Int == 0)
        #expect(audio["drift_ppm"] is NSNull)
        // Without --audio there is no audio object.
        let plain = dir.path("plain.json")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10", "--quiet",
                                    "-o", dir.path("plain.mkv"), "--json-summary", plain])
        try #require(r.status == 0)
        let other = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plain))) as? [String: Any])
        #expect(other["audio"] == nil)
    }

    /// What cannot carry sound, or sound options without a sound, is refused before anything
    /// is written: exit 2, one line saying what to do.
    @Test(arguments: [
        (["-o", "x.h264"], "name the output .mp4, .mkv or .ts"),
        (["-o", "x.mp4", "--audio-codec", "pcm"], "needs Matroska"),
        (["-o", "x.ts", "--audio-codec", "pcm"], "needs Matroska"),
        (["-o", "x.mkv", "--audio-channels", "3"], "--audio-channels must be 1 or 2"),
        (["-o", "x.mkv", "--audio-codec", "pcm", "--audio-bitrate", "64k"], "PCM has a fixed rate"),
    ])
    func refusesWhatCannotCarrySound(arguments: [String], message: String) throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--frames", "5", "--audio", "test"] + arguments, cwd: dir.url)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count <= 2, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    @Test func soundOptionsNeedTheSound() throws {
        let r = try Tools.vtrecord(["--test-pattern", "--frames", "5", "-o", "/tmp/never.mkv", "--audio-codec", "opus"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--audio-codec applies to --audio"), "\(r.stderr)")
    }
}

extension SoundRecordingTests {
    /// A preset says where the sound comes from and how it is coded, as any other setting;
    /// the command line still wins.
    @Test func aPresetCarriesTheSound() throws {
        let config = try TemporaryDirectory()
        _ = try PresetTests.write("""
            test-pattern = true
            size = "320x240"
            audio = "test"
            audio-codec = "aac"
            audio-bitrate = "64k"
            audio-channels = 1
            """, name: "talk", in: config)
        let summary = config.path("summary.json")
        let r = try PresetTests.run(["--preset", "talk", "--audio-codec", "opus", "--duration", "1s", "--quiet",
                                     "-o", config.path("talk.mkv"), "--json-summary", summary], config: config)
        try #require(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        let audio = try #require(json["audio"] as? [String: Any])
        #expect(audio["codec"] as? String == "opus")
        #expect(audio["bitrate"] as? Int == 64_000)
        #expect(audio["channels"] as? Int == 1)
        let shown = try PresetTests.run(["presets", "show", "talk"], config: config)
        #expect(PresetTests.values(shown.stdoutText)["audio"] == "\"test\"", "\(shown.stdoutText)")
    }
}

extension SoundRecordingTests {
    /// Segments with sound: each file has the sound of its own pictures, to within a packet at
    /// either end, and its beeps where its flashes are.
    @Test(arguments: ["mkv", "ts", "mp4"])
    func eachSegmentHasItsSound(container: String) throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--duration", "6s", "--audio", "test",
                                    "--segment-time", "2s", "--quiet", "-o", dir.path("seg-{n}.\(container)")])
        try #require(r.status == 0, "\(r.stderr)")
        for n in 0..<3 {
            let file = dir.path("seg-\(n).\(container)")
            let sync = try SoundSync.measure(file)
            #expect(sync.flashes.count == 2, "\(file): flashes \(sync.flashes)")
            for offset in sync.offsets() {
                #expect(try abs(#require(offset, "\(file): onsets \(sync.onsets)")) <= 0.010)
            }
            #expect(abs(sync.audioEnd - sync.videoEnd) <= 0.025, "\(file): sound ends \(sync.audioEnd), picture \(sync.videoEnd)")
        }
    }
}

extension SoundRecordingTests {
    /// --audio-offset moves the sound by the milliseconds given, later or earlier.
    @Test(arguments: [100.0, -40.0])
    func theOffsetMovesTheSound(milliseconds: Double) throws {
        let dir = try TemporaryDirectory()
        let file = try record("offset.mkv", seconds: 3, ["--audio-offset", "\(milliseconds)"], in: dir)
        let sync = try SoundSync.measure(file)
        #expect(sync.flashes.count == 3)
        for offset in sync.offsets() {
            let found = try #require(offset, "onsets \(sync.onsets)")
            #expect(abs(found - milliseconds / 1000) <= 0.010, "a beep \(found * 1000) ms from its flash")
        }
        #expect(abs(sync.audioEnd - sync.videoEnd) <= 0.020)
    }
}
