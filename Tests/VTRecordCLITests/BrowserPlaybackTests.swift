import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real browser plays what vtrecord writes: headless Chromium, a finalized MP4 as a plain
/// file and a fragmented one through Media Source Extensions, each to its end, reporting its
/// duration and the frames it decoded to a loopback server (Tests/Browser); with sound, MP4
/// (AAC and Opus, plain and through MSE) and Matroska with Opus, the sound decoded too.
@Suite(.serialized) struct BrowserPlaybackTests {
    static let frames = 60

    struct Report: Decodable {
        var event: String
        var duration: Double?
        var totalVideoFrames: Int?
        var audioDecodedBytes: Int?
        var error: String?
    }

    /// avc1.PPCCLL from the file's avcC, for the MSE type.
    static func codecs(_ path: String) throws -> String {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let tag = Array("avcC".utf8)
        let at = try #require((0..<(bytes.count - 8)).first { Array(bytes[$0..<($0 + 4)]) == tag })
        return "avc1." + bytes[(at + 5)...(at + 7)].map { String(format: "%02x", $0) }.joined()
    }

    static func play(_ directory: TemporaryDirectory, file: String, query: String) throws -> Report {
        let root = CBuild.packageRoot.appendingPathComponent("Tests/Browser").path
        try FileManager.default.copyItem(atPath: root + "/play.html", toPath: directory.path("play-\(file).html"))
        let server = try ChildProcess(["/usr/bin/python3", root + "/serve.py", directory.url.path],
                                      environment: ProcessInfo.processInfo.environment)
        #expect(server.waitForStandardError(containing: "port "))
        let port = try #require(server.standardErrorSoFar.split(separator: " ").last
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        let url = "http://127.0.0.1:\(port)/play-\(file).html?file=\(file)&\(query)"
        let browser = try ChildProcess(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                                        "--autoplay-policy=no-user-gesture-required", "--mute-audio",
                                        "--user-data-dir=\(directory.path("profile-\(file)"))", url],
                                       environment: ProcessInfo.processInfo.environment)
        let served = server.wait(timeout: .seconds(90))
        browser.send(SIGTERM)
        let closed = browser.wait(timeout: .seconds(10))
        let line = try #require(served.standardOutputText.split(separator: "\n").first,
                                "no report from the page: \(served.transcript)\nchromium: \(closed.transcript)")
        return try JSONDecoder().decode(Report.self, from: Data(line.utf8))
    }

    /// `soundBytes`: the bytes of the file's sound packets, which Chromium must have decoded
    /// (nearly) all of.
    static func check(_ report: Report, _ what: String, soundBytes: Int? = nil) {
        print("chromium, \(what): \(report)")
        if let soundBytes {
            #expect(Double(report.audioDecodedBytes ?? 0) >= 0.9 * Double(soundBytes),
                    "\(what): \(report.audioDecodedBytes ?? -1) of \(soundBytes) bytes of sound decoded")
        }
        #expect(report.event == "ended", "\(what): \(report)")
        #expect(report.error == nil, "\(what): \(report)")
        #expect(abs((report.duration ?? 0) - Double(frames) / 30) <= 1.0 / 30, "\(what): duration \(report.duration ?? -1)")
        #expect(abs((report.totalVideoFrames ?? 0) - frames) <= 1, "\(what): \(report.totalVideoFrames ?? -1) frames decoded")
    }

    @Test func chromiumPlaysAFinalizedMP4ToTheEnd() throws {
        let dir = try TemporaryDirectory()
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "\(Self.frames)",
                                    "--speed", "veryfast", "--quiet", "-o", dir.path("plain.mp4")])
        try #require(r.status == 0, "\(r.stderr)")
        Self.check(try Self.play(dir, file: "plain.mp4", query: "mode=file"), "finalized MP4")
    }

    @Test func chromiumPlaysAFragmentedMP4ThroughMediaSourceExtensions() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("frag.mp4")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "\(Self.frames)",
                                    "--speed", "veryfast", "--keyint", "30", "--mp4-fragmented", "--quiet", "-o", path])
        try #require(r.status == 0, "\(r.stderr)")
        let type = "video/mp4; codecs=\"\(try Self.codecs(path))\""
        let query = "mode=mse&type=" + (type.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? type)
        Self.check(try Self.play(dir, file: "frag.mp4", query: query), "fragmented MP4 through MSE")
    }

    /// Both tracks play to the end: a finalized MP4 with AAC and with Opus, Matroska with Opus,
    /// and a fragmented MP4 with AAC through Media Source Extensions.
    @Test(arguments: [("aac", "mp4", "file"), ("opus", "mp4", "file"), ("opus", "mkv", "file"), ("aac", "mp4", "mse")])
    func chromiumPlaysBothTracks(codec: String, container: String, mode: String) throws {
        let dir = try TemporaryDirectory()
        let name = "sound-\(codec)-\(mode).\(container)"
        let path = dir.path(name)
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "\(Self.frames)", "--audio", "test",
                                    "--audio-codec", codec, "--speed", "veryfast", "--keyint", "30", "--quiet", "-o", path]
                                   + (mode == "mse" ? ["--mp4-fragmented"] : []))
        try #require(r.status == 0, "\(r.stderr)")
        var query = "mode=\(mode)"
        if mode == "mse" {
            let type = "video/mp4; codecs=\"\(try Self.codecs(path)), mp4a.40.2\""
            query += "&type=" + (type.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? type)
        }
        let packets = try Tools.ffprobe(path, ["-select_streams", "a", "-show_entries", "packet=size", "-show_packets"])
        let soundBytes = (packets["packets"] as? [[String: Any]] ?? []).compactMap { ($0["size"] as? String).flatMap(Int.init) }
            .reduce(0, +)
        try #require(soundBytes > 1000, "\(soundBytes) bytes of sound in \(name)")
        Self.check(try Self.play(dir, file: name, query: query), "\(container) with \(codec), \(mode)", soundBytes: soundBytes)
    }

    /// An H.264 camera's own access units stored by --encoder copy, with the test sound in AAC:
    /// Chromium plays the finalized MP4 to its end, both tracks.
    @Test func chromiumPlaysAnH264CamerasStreamStoredAsItCame() throws {
        let camera = try FakeCamera(knobs: [.formats("H264:640x480@30")])
        let dir = try TemporaryDirectory()
        let path = dir.path("camera.mp4")
        let r = try ChildProcess.run([Tools.vtrecord, "--device", camera.path, "--encoder", "copy", "--format", "h264",
                                      "--size", "640x480", "--fps", "30", "--frames", "\(Self.frames)", "--keyint", "1s",
                                      "--audio", "test", "--quiet", "-o", path],
                                     environment: try camera.environment(), timeout: .seconds(60))
        try #require(r.status == 0, "\(r.transcript)")
        let packets = try Tools.ffprobe(path, ["-select_streams", "a", "-show_entries", "packet=size", "-show_packets"])
        let soundBytes = (packets["packets"] as? [[String: Any]] ?? []).compactMap { ($0["size"] as? String).flatMap(Int.init) }
            .reduce(0, +)
        try #require(soundBytes > 1000, "\(soundBytes) bytes of sound")
        Self.check(try Self.play(dir, file: "camera.mp4", query: "mode=file"), "an H.264 camera's copy", soundBytes: soundBytes)
    }

    /// The live page of an MJPEG camera's copy, which has no H.264 to stream: /live.mp4 answers
    /// 404, and the page shows /stream.mjpeg instead, the camera's frame numbers going forward.
    @Test func chromiumShowsTheLivePageOfAnMJPEGCopy() throws {
        typealias Live = CameraRecordingTests.LiveServerTests
        let camera = try FakeCamera()
        let (child, port) = try CameraCopyTests.serve(camera, ["--frames", "300", "-o", camera.file("rec.mkv")])
        defer { if child.isRunning { child.send(SIGKILL) } }
        let page = try Tools.run("/usr/bin/python3", [Live.browser + "/cdp.py", "http://127.0.0.1:\(port)/",
                                                      Live.browser + "/framecode.js", "--timeout", "30",
                                                      "--args", #"{"samples": 20, "seconds": 4, "period_ms": 150, "selector": ".picture img"}"#])
        child.send(SIGINT)
        #expect(child.wait().status == 0)
        try #require(page.status == 0, "cdp.py: \(page.stderr)")
        let shown = ((try JSONSerialization.jsonObject(with: page.stdout) as? [[String: Any]]) ?? []).compactMap { $0["frame"] as? Int }
        #expect(shown.count >= 15 && zip(shown, shown.dropFirst()).allSatisfy { $0 <= $1 } && shown.last! > shown.first!,
                "the page's picture: \(shown)")
    }
}
