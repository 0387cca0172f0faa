import Foundation
import Testing

/// Several outputs from one encode: a second file, and network streams received by programs
/// vtrecord did not write (ffmpeg's SRT listener), on loopback only.
@Suite struct PublishingTests {
    /// The decoded pictures' MD5s, picture stream only, in decode order as ffmpeg gives them.
    static func pictureMD5s(_ file: String) throws -> [String] {
        let r = try Tools.run("ffmpeg", ["-v", "error", "-i", file, "-map", "0:v", "-fps_mode", "passthrough",
                                         "-f", "framemd5", "-"])
        #expect(r.status == 0, "ffmpeg could not decode \(file): \(r.stderr)")
        return r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
    }

    /// A loopback port nothing listens on now.
    static func freePort(udp: Bool) -> Int {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
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

    /// ffmpeg's SRT listener decodes the pictures the local file holds, from the first keyframe
    /// it got; the sound goes with them.
    @Test func anSRTReceiverGetsTheRecordingsPictures() throws {
        let dir = try TemporaryDirectory()
        let port = Self.freePort(udp: true)
        let received = dir.path("received.ts")
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        receiver.arguments = ["-v", "error", "-i", "srt://127.0.0.1:\(port)?mode=listener&timeout=15000000",
                              "-c", "copy", "-f", "mpegts", received]
        receiver.standardInput = FileHandle.nullDevice
        receiver.standardError = FileHandle.nullDevice
        try receiver.run()
        defer { if receiver.isRunning { receiver.terminate() } }
        Thread.sleep(forTimeInterval: 0.5)
        let r = try Tools.vtrecord(["--test-pattern", "--realtime", "drop", "--size", "160x120", "--duration", "3s",
                                    "--keyint", "15", "--audio", "test", "-o", "local.ts",
                                    "-o", "srt://127.0.0.1:\(port)?latency=120",
                                    "--json-summary", "summary.json", "--quiet"], cwd: dir.url)
        #expect(r.status == 0, "\(r.stderr)")
        let deadline = Date().addingTimeInterval(10)
        while receiver.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let local = try Self.pictureMD5s(dir.path("local.ts"))
        let got = try Self.pictureMD5s(received)
        #expect(local.count == 90)
        // A receiver that was not ready at once misses a GOP or two, never a picture after it.
        #expect(got.count >= 60, "received \(got.count) of \(local.count)")
        if let first = got.first, let start = local.firstIndex(of: first) {
            #expect(Array(local[start...].prefix(got.count)) == got)
        } else {
            Issue.record("the receiver's first picture is not one of the recording's")
        }
        let streams = try Tools.ffprobe(received, ["-show_entries", "stream=codec_type"])["streams"] as? [[String: Any]]
        #expect(streams?.contains { $0["codec_type"] as? String == "audio" } == true)
        let outputs = try Self.summary(dir.path("summary.json"))["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.last?["name"] as? String == "srt://127.0.0.1:\(port)?latency=120")
        #expect(outputs.last?["state"] as? String == "finished")
    }

    /// The recording itself published, no file: a receiver gets every picture; with nobody
    /// listening the run ends with exit 5 and one line.
    @Test func aRecordingPublishedAloneWritesNoFile() throws {
        let dir = try TemporaryDirectory()
        let port = Self.freePort(udp: false)
        let received = dir.path("received.md5")
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        // Decoded as it comes: RTSP's first packets carry no times a copy could keep.
        receiver.arguments = ["-v", "error", "-rtsp_flags", "listen", "-timeout", "15",
                              "-i", "rtsp://127.0.0.1:\(port)/cam", "-map", "0:v", "-fps_mode", "passthrough",
                              "-f", "framemd5", received]
        receiver.standardInput = FileHandle.nullDevice
        receiver.standardError = FileHandle.nullDevice
        try receiver.run()
        defer { if receiver.isRunning { receiver.terminate() } }
        // The recording connects once and does not retry: until the receiver listens, a
        // refused run is tried again.
        var r = try Tools.vtrecord(["--version"])
        for _ in 0..<40 {
            r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "60", "--keyint", "15",
                                    "-o", "rtsp://127.0.0.1:\(port)/cam", "--json-summary", "summary.json", "--quiet"],
                                   cwd: dir.url)
            guard r.status == 5 && r.stderr.contains("Connection refused") else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(r.status == 0, "\(r.stderr)")
        let deadline = Date().addingTimeInterval(10)
        while receiver.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let pictures = try String(contentsOfFile: received, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
        #expect(pictures.count >= 55, "received \(pictures.count) pictures")
        let summary = try Self.summary(dir.path("summary.json"))
        #expect(summary["container"] as? String == "rtp")
        #expect(summary["segments"] as? [String] == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == ["received.md5", "summary.json"])

        let refused = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--frames", "30",
                                          "-o", "srt://127.0.0.1:\(Self.freePort(udp: true))?connect_timeout=500"],
                                         cwd: dir.url)
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(refused.stderr.contains("cannot connect") || refused.stderr.contains("no answer"), "\(refused.stderr)")
    }

    /// A refused connection is said once, counted and retried, and the recording has every
    /// frame and exits 0.
    @Test func aRefusedConnectionDoesNotStopTheRecording() throws {
        let dir = try TemporaryDirectory()
        let port = Self.freePort(udp: false)
        let r = try Tools.vtrecord(["--test-pattern", "--realtime", "drop", "--size", "160x120", "--duration", "3s",
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
        let silent = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(silent, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.vtrecord)
        process.arguments = ["--test-pattern", "--realtime", "drop", "--size", "160x120", "-o", "local.mp4",
                             "-o", "srt://127.0.0.1:\(port)", "--quiet"]
        process.currentDirectoryURL = dir.url
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 2)
        let stopped = Date()
        process.interrupt()
        let deadline = stopped.addingTimeInterval(10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let took = Date().timeIntervalSince(stopped)
        if process.isRunning { process.terminate() }
        #expect(took < 1.0, "the run took \(took) s to end after SIGINT")
        #expect(process.terminationStatus == 0)
        let frames = try Self.pictureMD5s(dir.path("local.mp4")).count
        #expect(frames >= 45, "\(frames) frames")
        let mp4 = try Tools.ffprobe(dir.path("local.mp4"), ["-show_entries", "format=format_name"])
        #expect(mp4["format"] != nil)
    }
}
