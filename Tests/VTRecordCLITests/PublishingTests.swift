import Foundation
import Testing
import VTTestSupport

/// Several outputs from one encode, as the command line takes them: bad outputs refused, a
/// second file with segments of its own, presets and batch files naming several, a recording
/// published alone, and streams that cannot connect (the receivers' side is in
/// PublishingReceiverTests).
@Suite struct PublishingTests {
    /// The decoded pictures' MD5s, picture stream only, in decode order as ffmpeg gives them.
    static func pictureMD5s(_ file: String) throws -> [String] {
        let r = try Tools.run("ffmpeg", ["-v", "error", "-i", file, "-map", "0:v", "-fps_mode", "passthrough",
                                         "-f", "framemd5", "-"])
        #expect(r.status == 0, "ffmpeg could not decode \(file): \(r.stderr)")
        return r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
    }

    static func summary(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
    }

    @Test(arguments: [
        ("http://127.0.0.1/x", "cannot publish to http://"),
        ("srt://127.0.0.1", "names no port"),
        ("srt://127.0.0.1:9 x", "not a well-formed URL"),
        ("rtmp://127.0.0.1/live", "names no stream"),
        ("first.ts", "already an output"),
        ("[segment-time=2s]second.mp4", "segments need {n}"),
        ("[colour=red]second.mp4", "no output option 'colour'"),
    ])
    func aBadOutputIsRefusedBeforeAnythingIsWritten(output: String, says: String) throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--duration", "1s",
                                    "-o", "first.ts", "-o", output], cwd: dir.url)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains(says), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").first?.contains("error:") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    /// The first -o is the recording: brackets there would become part of its file's name.
    @Test func bracketsOnTheRecordingAreRefused() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--duration", "1s",
                                    "-o", "[segment-time=1s]seg-{n}.mp4"], cwd: dir.url)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("takes the command's own options") && r.stderr.contains("--segment-time"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").filter { $0.contains("error:") }.count == 1, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    @Test func aCodecAStreamCannotCarryIsRefused() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--duration", "1s", "--audio", "test",
                                    "--audio-codec", "opus", "-o", "first.mkv",
                                    "-o", "rtmp://user:secret@127.0.0.1/live/cam"], cwd: dir.url)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("cannot carry opus sound: use --audio-codec aac"), "\(r.stderr)")
        // The password is never printed.
        #expect(!r.stderr.contains("secret") && r.stderr.contains("user:***@"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    /// A second file, segmented on its own, holds the recording's pictures exactly.
    @Test func aSecondFileGetsEveryFrameInItsOwnSegments() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "90", "--keyint", "15",
                                    "-o", "whole.ts", "-o", "[segment-time=1s]part-{n}.mkv",
                                    "--json-summary", "summary.json", "--quiet"], cwd: dir.url)
        #expect(r.status == 0, "\(r.stderr)")
        let whole = try Self.pictureMD5s(dir.path("whole.ts"))
        let parts = try (0..<3).flatMap { try Self.pictureMD5s(dir.path("part-\($0).mkv")) }
        #expect(whole.count == 90)
        #expect(parts == whole)
        let outputs = try Self.summary(dir.path("summary.json"))["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.count == 2)
        #expect(outputs.last?["files"] as? [String] == ["part-0.mkv", "part-1.mkv", "part-2.mkv"])
        #expect(outputs.last?["packets_dropped"] as? Int == 0)
    }

    /// A preset and a batch job name several outputs as a list (a string is still one); -o on
    /// the command line replaces a preset's list.
    @Test func presetsAndBatchFilesNameSeveralOutputs() throws {
        let dir = try TemporaryDirectory()
        try Data("""
            test-pattern = true
            size = "160x120"
            frames = 15
            output = ["a.ts", "[container=mkv]b.video"]
            """.utf8).write(to: URL(fileURLWithPath: dir.path("two.toml")))
        let r = try Tools.vtrecord(["--preset", "./two.toml", "--quiet"], cwd: dir.url)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.pictureMD5s(dir.path("a.ts")) == Self.pictureMD5s(dir.path("b.video")))
        let replaced = try Tools.vtrecord(["--preset", "./two.toml", "-o", "c.ts", "--quiet"], cwd: dir.url)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
                == ["a.ts", "b.video", "c.ts", "two.toml"])
        try Data("""
            [[job]]
            test-pattern = true
            size = "160x120"
            frames = 15
            output = ["d.mp4", "e.mkv"]
            """.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let batch = try Tools.vtrecord(["batch", "jobs.toml", "--quiet"], cwd: dir.url)
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(try Self.pictureMD5s(dir.path("d.mp4")).count == 15)
        #expect(try Self.pictureMD5s(dir.path("e.mkv")).count == 15)
    }

    /// The recording itself published, no file: a receiver gets every picture; with nobody
    /// listening the run ends with exit 5 and one line.
    @Test func aRecordingPublishedAloneWritesNoFile() throws {
        let dir = try TemporaryDirectory()
        let receiver = try StreamReceiver(.rtsp)
        let r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "60", "--keyint", "15",
                                    "-o", receiver.url, "--json-summary", "summary.json", "--quiet"], cwd: dir.url)
        let parts = receiver.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(parts.count == 1 && (parts.first?.frames.count ?? 0) >= 55,
                "\(parts.map { "\($0.frames.count) pictures: \($0.standardError.suffix(1500))" })")
        let summary = try Self.summary(dir.path("summary.json"))
        #expect(summary["container"] as? String == "rtp")
        #expect(summary["segments"] as? [String] == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["summary.json"])

        let refused = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "30",
                                          "-o", "srt://127.0.0.1:\(LoopbackPort.free(udp: true))?connect_timeout=500"],
                                         cwd: dir.url)
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(refused.stderr.contains("cannot connect") || refused.stderr.contains("no answer"), "\(refused.stderr)")
    }

    /// A refused connection is said once, counted and retried, and the recording has every
    /// frame and exits 0.
    @Test func aRefusedConnectionDoesNotStopTheRecording() throws {
        let dir = try TemporaryDirectory()
        let port = LoopbackPort.free(udp: false)
        // zerolatency: x264's lookahead would hold the first packet (and the branch's first
        // attempt) back by over a second of the three, under load nearly two.
        let r = try Tools.vtrecord(["--test-pattern", "--realtime", "drop", "--size", "160x120", "--duration", "3s",
                                    "--tune", "zerolatency",
                                    "-o", "local.mp4", "-o", "rtsp://127.0.0.1:\(port)/cam",
                                    "--json-summary", "summary.json"], cwd: dir.url)
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try Self.summary(dir.path("summary.json"))
        // Every frame encoded is in the file; a busy machine may drop some at the queue.
        let encoded = summary["frames_encoded"] as? Int ?? -1
        #expect(try Self.pictureMD5s(dir.path("local.mp4")).count == encoded)
        #expect(encoded >= 60, "\(summary)")
        let said = r.stderr.split(separator: "\n").filter { $0.contains("rtsp://127.0.0.1:\(port)/cam: cannot connect") }
        #expect(said.count == 1, "\(r.stderr)")
        #expect(summary["outputs_kept_up"] as? Bool == false)
        let branch = (summary["outputs"] as? [[String: Any]])?.last
        #expect(branch?["state"] as? String == "failed")
        #expect((branch?["packets_dropped"] as? Int ?? 0) > 0)
        #expect((branch?["seconds_down"] as? Double ?? 0) > 1)
    }

    /// Ctrl-C while a stream waits on a receiver that never answers (an SRT caller to a UDP
    /// port nobody reads) ends the run within a second, the recording finished.
    @Test func aStopEndsTheRunWhileAStreamIsStillConnecting() throws {
        let dir = try TemporaryDirectory()
        let (silent, port) = LoopbackPort.bound(udp: true)
        defer { close(silent) }
        let child = try ChildProcess([Tools.vtrecord, "--test-pattern", "--realtime", "drop", "--size", "160x120",
                                      "-o", dir.path("local.mp4"), "-o", "srt://127.0.0.1:\(port)"],
                                     environment: ProcessInfo.processInfo.environment)
        // Recording, with the stream still connecting (it gives up only after 5 s).
        #expect(child.waitForStandardError(containing: "also writing to"), "\(child.standardErrorSoFar)")
        Thread.sleep(forTimeInterval: 1.5)
        let stopped = ContinuousClock.now
        child.send(SIGINT)
        let result = child.wait(timeout: .seconds(10))
        let took = stopped.duration(to: .now)
        #expect(took < .seconds(1), "the run took \(took) to end after SIGINT")
        #expect(result.status == 0, "\(result.transcript)")
        let frames = try Self.pictureMD5s(dir.path("local.mp4")).count
        #expect(frames >= 45, "\(frames) frames")
        let mp4 = try Tools.ffprobe(dir.path("local.mp4"), ["-show_entries", "format=format_name"])
        #expect(mp4["format"] != nil)
    }
}
