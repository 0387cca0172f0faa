import Foundation
import Testing
import VTCore
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--events`: clips of the fake camera around events asked for at known frames. The camera
/// draws its frame sequence into every picture and sends SIGUSR1 as it hands out the frames
/// a test names (`FakeCamera.Knob.signalAt`), so what each clip must hold is known to the
/// frame, and FFmpeg's decode of the clip says what it does hold.
///
/// Real time, one recording at a time: each runs a few seconds of a 640x480 camera.
@Suite(.serialized) struct EventClipTests {
    static let rate = 30

    /// Records `camera` for `frames` frames with `arguments` (the events' options) and returns
    /// the result and the summary.
    static func record(_ camera: FakeCamera, frames: Int, _ arguments: [String]) throws -> (ProcessResult, [String: Any]) {
        let summary = camera.file("summary.json")
        let r = try Tools.run(Tools.vtrecord,
                              ["--device", camera.path, "--format", "nv12", "--size", "640x480", "--fps", "\(rate)",
                               "--speed", "ultrafast", "--keyint", "1s", "--frames", "\(frames)", "--quiet",
                               "--json-summary", summary] + arguments,
                              environment: try camera.environment())
        let data = (try? Data(contentsOf: URL(fileURLWithPath: summary))) ?? Data()
        return (r, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    static func clips(_ summary: [String: Any]) -> [[String: Any]] {
        ((summary["events"] as? [String: Any])?["clips"] as? [[String: Any]]) ?? []
    }

    /// The frame numbers a clip holds, each once and in order (or the test fails).
    static func counters(_ file: String, width: Int = 640, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Int] {
        let counters = try Tools.counters(file, width: width).map { try #require($0, sourceLocation: sourceLocation) }
        try #require(!counters.isEmpty, "\(file) holds no picture", sourceLocation: sourceLocation)
        #expect(counters == Array(counters[0]...counters[counters.count - 1]),
                "\(file): frames missing, repeated or out of order: \(counters)", sourceLocation: sourceLocation)
        return counters
    }

    /// SIGUSR1 at frame 120 with 2 s before and 2 s after: the clip holds every frame from a
    /// keyframe at or before frame 60 through frame 180, once each, and not much more.
    @Test func aSignalKeepsThePreRollAndThePostRoll() throws {
        let camera = try FakeCamera(knobs: [.signalAt([120])])
        // The hook leaves what it was told beside the clip, then fails.
        let (r, summary) = try Self.record(camera, frames: 270, ["--events", camera.file("clip-{n}.mp4"),
                                                                  "--pre-roll", "2s", "--post-roll", "2s",
                                                                  "--on-event", #"env | grep ^VTRECORD_CLIP_ > "$VTRECORD_CLIP_FILE.env"; exit 3"#])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
        let clips = Self.clips(summary)
        try #require(clips.count == 1, "\(summary["events"] ?? "no events")")
        #expect(clips[0]["file"] as? String == camera.file("clip-0.mp4"))
        #expect(clips[0]["trigger"] as? String == "signal")
        #expect(clips[0]["state"] as? String == "finished")
        let frames = try Self.counters(camera.file("clip-0.mp4"))
        #expect(frames.first! <= 120 - 2 * Self.rate, "the pre-roll is short: \(frames.first!)")
        #expect(frames.first! > 120 - 2 * Self.rate - Self.rate, "more than a keyframe interval early: \(frames.first!)")
        #expect(frames.last! >= 120 + 2 * Self.rate, "the post-roll is short: \(frames.last!)")
        #expect(frames.last! <= 120 + 2 * Self.rate + 2, "the clip ran on: \(frames.last!)")
        #expect(clips[0]["frames"] as? Int == frames.count)
        #expect((clips[0]["pre_roll"] as? Double ?? 0) >= 2)
        // Only the clip is kept: no recording of its own.
        let files = try FileManager.default.contentsOfDirectory(atPath: camera.directory.path)
        #expect(files.filter { $0.hasSuffix(".mp4") || $0.hasSuffix(".h264") } == ["clip-0.mp4"], "\(files)")
        // The clip ended at frame 181 of 270: its hook ran while the recording went on.
        let told = try String(contentsOfFile: camera.file("clip-0.mp4.env"), encoding: .utf8)
        let environment = Dictionary(uniqueKeysWithValues: told.split(separator: "\n").map {
            let parts = $0.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        })
        #expect(environment["VTRECORD_CLIP_FILE"] == camera.file("clip-0.mp4"))
        #expect(environment["VTRECORD_CLIP_TRIGGER"] == "signal" && environment["VTRECORD_CLIP_LABEL"] == "")
        #expect(environment["VTRECORD_CLIP_FRAMES"] == "\(frames.count)")
        let start = try #require(environment["VTRECORD_CLIP_START"].flatMap(Double.init))
        let end = try #require(environment["VTRECORD_CLIP_END"].flatMap(Double.init))
        #expect(abs(end - start - Double(frames.count) / Double(Self.rate)) < 0.05, "\(start) … \(end)")
        let events = try #require(summary["events"] as? [String: Any])
        #expect(events["hooks_run"] as? Int == 1 && events["hooks_failed"] as? Int == 1, "\(events)")
        #expect(r.stderr.contains("exited with 3"), "\(r.stderr)")
    }

    /// A second event during a clip extends it: one clip, through 2 s after the second.
    @Test func anEventDuringAClipExtendsIt() throws {
        let camera = try FakeCamera(knobs: [.signalAt([90, 135])])
        let (r, summary) = try Self.record(camera, frames: 240, ["--events", camera.file("ext-%H%M%S.mkv"),
                                                                  "--pre-roll", "2s", "--post-roll", "2s"])
        try #require(r.status == 0, "\(r.stderr)")
        let clips = Self.clips(summary)
        try #require(clips.count == 1, "\(summary["events"] ?? "no events")")
        #expect((summary["events"] as? [String: Any])?["triggers"] as? Int == 2)
        let frames = try Self.counters(try #require(clips[0]["file"] as? String))
        #expect(frames.first! <= 90 - 2 * Self.rate)
        #expect(frames.last! >= 135 + 2 * Self.rate && frames.last! <= 135 + 2 * Self.rate + 2, "\(frames.last!)")
    }

    /// A clip whose pre-roll reaches back into the clip before starts where that one ended:
    /// between them they hold every frame once. --max-clip cuts a long one the same way.
    @Test func clipsBackToBackShareNoFrameAndSkipNone() throws {
        let camera = try FakeCamera(knobs: [.signalAt([100, 200])])
        let (r, summary) = try Self.record(camera, frames: 300, ["--events", camera.file("b2b-{n:02}.ts"),
                                                                  "--pre-roll", "3s", "--post-roll", "1s",
                                                                  "--max-clip", "2s"])
        try #require(r.status == 0, "\(r.stderr)")
        let clips = Self.clips(summary)
        try #require(clips.count >= 3, "\(summary["events"] ?? "no events")")
        let parts = try clips.map { try Self.counters(try #require($0["file"] as? String)) }
        for (a, b) in zip(parts, parts.dropFirst()) {
            #expect(a.last! + 1 == b.first!, "a gap or an overlap between clips: …\(a.last!) then \(b.first!)…")
        }
        #expect(parts.first!.first! <= 100 - 3 * Self.rate)
        #expect(parts.last!.last! >= 200 + Self.rate)
        for (clip, frames) in zip(clips, parts) {
            #expect(Double(frames.count) <= 2.0 * Double(Self.rate) + 1, "\(clip["file"]!) is longer than --max-clip")
        }
        #expect(clips.dropFirst().contains { $0["continues"] as? Bool == true }, "no clip was cut at --max-clip")
    }

    /// The control socket: an event with a label and a duration, asked between two `status`
    /// answers, makes a clip named with the label that holds from 2 s before the event to 1 s
    /// after its end; bad lines get an error answer and the socket goes on.
    @Test func theControlSocketTakesEventsAndAnswersStatus() throws {
        let camera = try FakeCamera()
        let socketPath = camera.file("ctl")
        let child = try ChildProcess([Tools.vtrecord,
                                      "--device", camera.path, "--format", "nv12", "--size", "640x480",
                                      "--speed", "ultrafast", "--keyint", "1s", "--frames", "240", "--quiet",
                                      "--events", camera.file("{label}-{n}.mp4"), "--pre-roll", "2s", "--post-roll", "1s",
                                      "--control-socket", socketPath, "--json-summary", camera.file("summary.json")],
                                     environment: try camera.environment())
        let control = try #require(ControlClient.connecting(to: socketPath), "no control socket at \(socketPath)")
        // Well into the recording, so that 2 s of pre-roll are held.
        var before = 0
        while before < 100 {
            usleep(100_000)
            before = try #require(try control.status()["frames_captured"] as? Int)
        }
        #expect(try control.ask("event door 1s")["ok"] as? Bool == true)
        let after = try #require(try control.status()["frames_captured"] as? Int)
        let bad = try control.ask("event bad/label")
        #expect(bad["ok"] as? Bool == false && (bad["error"] as? String)?.contains("label") == true, "\(bad)")
        #expect(try control.ask("take-over")["ok"] as? Bool == false)
        let still = camera.file("still now.jpg")
        let snapshot = try control.ask("snapshot \(still)")
        #expect(snapshot["ok"] as? Bool == true && snapshot["file"] as? String == still, "\(snapshot)")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: still))
        #expect(jpeg.starts(with: [0xFF, 0xD8]) && jpeg.suffix(2) == Data([0xFF, 0xD9]), "not a whole JPEG")
        let picture = try Tools.ffprobe(still, ["-show_entries", "stream=width,height"])
        #expect((picture["streams"] as? [[String: Any]])?.first?["width"] as? Int == 640)
        #expect(try control.ask("snapshot \(camera.directory.path)")["ok"] as? Bool == false, "a folder is not a still")
        // An existing file is kept, as -o keeps one, since the recording has no --overwrite.
        let again = try control.ask("snapshot \(still)")
        #expect(again["ok"] as? Bool == false && (again["error"] as? String)?.contains("already exists") == true, "\(again)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: still)) == jpeg, "the first still was overwritten")
        #expect(try control.status()["events"] != nil)
        let r = child.wait()
        try #require(r.status == 0, "\(r.standardError)")
        #expect(!FileManager.default.fileExists(atPath: socketPath), "the socket was left behind")
        let summary = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: camera.file("summary.json")))) as? [String: Any])
        let clips = Self.clips(summary)
        try #require(clips.count == 1, "\(summary["events"] ?? "no events")")
        #expect(clips[0]["label"] as? String == "door" && clips[0]["trigger"] as? String == "control")
        let frames = try Self.counters(try #require(clips[0]["file"] as? String))
        #expect((clips[0]["file"] as? String)?.hasSuffix("/door-0.mp4") == true)
        // The event came between the two answers: frame `before` at the earliest, `after` at the latest.
        #expect(frames.first! <= after - 2 * Self.rate, "\(frames.first!) (event between \(before) and \(after))")
        #expect(frames.last! >= before + 2 * Self.rate - 1, "\(frames.last!) (event between \(before) and \(after))")
    }

    /// Beside a continuous recording, a clip is made of the same packets: its pictures are the
    /// recording's, picture for picture, from its first keyframe.
    @Test func aClipBesideTheRecordingHoldsTheRecordingsOwnPictures() throws {
        let camera = try FakeCamera(knobs: [.signalAt([90])])
        let (r, summary) = try Self.record(camera, frames: 180, ["-o", camera.file("all.mkv"),
                                                                  "--events", camera.file("clip-{n}.mkv"),
                                                                  "--pre-roll", "1s", "--post-roll", "1s"])
        try #require(r.status == 0, "\(r.stderr)")
        try #require(Self.clips(summary).count == 1, "\(summary["events"] ?? "no events")")
        let whole = try Tools.frameMD5s(camera.file("all.mkv"))
        let clip = try Tools.frameMD5s(camera.file("clip-0.mkv"))
        try #require(clip.count > 60)
        let start = try #require(whole.firstIndex(of: clip[0]))
        #expect(Array(whole[start..<min(whole.count, start + clip.count)]) == clip)
        #expect(whole.count == 180)
    }

    /// Sound in a clip is in sync: the fake camera flashes on whole seconds, the fake
    /// microphone beeps then, and each beep in the clip is within the live tolerance of its flash.
    @Test func soundInAClipIsInSync() throws {
        let rig = try SoundCaptureTests.Rig(SoundCaptureTests.microphone(), cameraKnobs: [.signalAt([150])])
        let clip = rig.alsa.file("sync-{n}.mp4")
        let r = try Tools.run(Tools.vtrecord,
                              rig.arguments(rig.alsa.file("all.mkv"), ["--duration", "9s", "--events", clip,
                                                                      "--pre-roll", "3s", "--post-roll", "2s"]),
                              environment: rig.environment)
        try #require(r.status == 0, "\(r.stderr)")
        try SoundCaptureTests.expectInSync(rig.alsa.file("sync-0.mp4"), flashes: 4...6, "the clip")
    }

    /// SIGKILL while a clip is written leaves a clip that plays up to its last fragment.
    @Test func aClipSurvivesSIGKILL() throws {
        let camera = try FakeCamera(knobs: [.signalAt([60])])
        let child = try ChildProcess([Tools.vtrecord,
                                      "--device", camera.path, "--format", "nv12", "--size", "640x480",
                                      "--speed", "ultrafast", "--keyint", "1s", "--quiet",
                                      "--events", camera.file("kill-{n}.mp4"), "--pre-roll", "1s", "--post-roll", "30s"],
                                     environment: try camera.environment())
        // Frame 60 comes at 2 s; by 5 s the clip has 3 s of fragments on disk.
        usleep(5_000_000)
        child.send(SIGKILL)
        _ = child.wait()
        let frames = try Self.counters(camera.file("kill-0.mp4"))
        #expect(frames.count >= 60, "\(frames.count) frames survived")
        #expect(frames.first! <= 30)
    }

    /// A still scene with camera noise and a square crossing it in frames 150 to 239: one clip,
    /// from the pre-roll before the motion to the post-roll after it stopped.
    @Test func motionMakesOneClipAroundIt() throws {
        let camera = try FakeCamera(knobs: [.still, .noise(amplitude: 6), .mover(from: 150, to: 240)])
        let (r, summary) = try Self.record(camera, frames: 420, ["--motion", "--motion-end", "0.5s",
                                                                  "--events", camera.file("m-{n}.mp4"),
                                                                  "--pre-roll", "2s", "--post-roll", "1s"])
        try #require(r.status == 0, "\(r.stderr)")
        let motion = try #require(summary["motion"] as? [String: Any], "\(summary)")
        #expect(motion["episodes"] as? Int == 1, "\(motion)")
        #expect(motion["frames"] as? Int == 420)
        let clips = Self.clips(summary)
        try #require(clips.count == 1, "\(summary["events"] ?? "no events")")
        #expect(clips[0]["trigger"] as? String == "motion")
        let frames = try Self.counters(try #require(clips[0]["file"] as? String))
        // Motion starts within a few frames of 150; it ends once 0.5 s (15 pictures) were still
        // after 239, at 254, and the post-roll runs from there.
        #expect(frames.first! <= 150 - 2 * Self.rate, "the pre-roll is short: \(frames.first!)")
        #expect(frames.last! >= 254 + Self.rate - 1, "the clip ended early: \(frames.last!)")
        #expect(frames.last! <= 254 + Self.rate + 10, "the clip ran on: \(frames.last!)")
    }

    /// A lamp blinking once a second never leaves the picture still for --motion-end: without a
    /// bound, one episode, and one clip, would last the whole recording. With --motion-max 3s
    /// the episode and its clip end 3 s after the motion started, the summary counts the cut,
    /// a warning says what to do, and no episode starts again while the lamp blinks.
    @Test func aBlinkingLampMakesOneBoundedClip() throws {
        let camera = try FakeCamera(knobs: [.still, .noise(amplitude: 6), .blink(period: 30, on: 15)])
        let (r, summary) = try Self.record(camera, frames: 330, ["--motion", "--motion-max", "3s",
                                                                  "--events", camera.file("b-{n}.mp4"),
                                                                  "--pre-roll", "1s", "--post-roll", "1s"])
        try #require(r.status == 0, "\(r.stderr)")
        let motion = summary["motion"] as? [String: Any] ?? [:]
        #expect(motion["episodes"] as? Int == 1 && motion["episodes_cut"] as? Int == 1, "\(motion)")
        #expect(r.stderr.contains("motion went on for 3 s without a pause of 1 s") && r.stderr.contains("--motion-mask"),
                "\(r.stderr)")
        let clips = Self.clips(summary)
        try #require(clips.count == 1, "\(summary["events"] ?? "no events")")
        let frames = try Self.counters(try #require(clips[0]["file"] as? String))
        // The lamp first goes dark at frame 15 (the scene was learnt lit): motion from about
        // frame 17, cut 90 frames later, then a second of post-roll; not the recording's 330.
        #expect(frames.last! >= 17 + 90 + Self.rate - 5 && frames.last! <= 17 + 90 + Self.rate + 15, "\(frames.last!)")
    }

    /// No motion: noise and a slow change of light, or the square behind a mask, make no clip.
    @Test(arguments: [
        ([FakeCamera.Knob.still, .noise(amplitude: 6), .lightRamp(from: 30, to: 120, delta: 40)], [String]()),
        ([FakeCamera.Knob.still, .noise(amplitude: 6), .mover(from: 60, to: 120)], ["--motion-mask", "0,190,640,100"]),
    ])
    func noMotionMakesNoClip(knobs: [FakeCamera.Knob], extra: [String]) throws {
        let camera = try FakeCamera(knobs: knobs)
        let (r, summary) = try Self.record(camera, frames: 180, ["--motion", "--events", camera.file("m-{n}.mp4")] + extra)
        try #require(r.status == 0, "\(r.stderr)")
        #expect((summary["motion"] as? [String: Any])?["episodes"] as? Int == 0, "\(summary["motion"] ?? "none")")
        #expect(Self.clips(summary).isEmpty)
    }

    @Test(arguments: [
        (["--events", "c-{n}.mp4", "--pre-roll", "121s"], "at most 120s"),
        (["--events", "clip.mp4"], "same name"),
        (["--events", "c-%Y%m%d.mp4"], "same name"),
        (["--pre-roll", "3s"], "add --events"),
        (["--events", "c-{n}.avi"], ".avi"),
        (["--events", "c-{name}.mp4"], "{label}"),
        (["--events", "c-{n}.mp4", "--segment-time", "10s"], "add -o"),
        (["--motion-area", "2%"], "add --motion"),
        (["--motion", "--motion-mask", "1,2,3"], "--motion-mask 1,2,3"),
        (["--motion", "--motion-mask", "/nonexistent/door.pgm"], "door.pgm"),
        (["--motion", "--motion-sensitivity", "2"], "0 (least) to 1 (most)"),
        (["--motion-max", "1m"], "add --motion"),
        (["--motion", "--motion-max", "500ms"], "give 1 s or more"),
    ])
    func badEventOptionsAreRefused(arguments: [String], expected: String) throws {
        try Tools.expectRefused(arguments, saying: expected)
    }

    /// A clip folder that is not there is refused at start, as -o into one is (exit 5, the
    /// same line), before the recording writes anything; not at the first event.
    @Test func aMissingClipFolderIsRefusedAtStart() throws {
        let directory = try TemporaryDirectory()
        let r = try Tools.run(Tools.vtrecord, ["--test-pattern", "--size", "160x120", "--frames", "30",
                                               "--events", directory.path("missing/e-{n}.mp4"), "-o", "x.mp4"],
                              cwd: directory.url)
        let plain = try Tools.run(Tools.vtrecord, ["--test-pattern", "--frames", "1", "-o", directory.path("missing/x.mp4")])
        #expect(r.status == 5 && r.status == plain.status, "\(r.stderr)")
        #expect(r.stderr.contains("missing/e-{n}.mp4: its directory does not exist"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").filter { $0.contains("error") }.count == 1, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    /// A keyframe interval longer than the pre-roll would start clips up to a whole interval
    /// early: it is shortened to the pre-roll, said, and the summary's settings show it.
    @Test func aKeyframeIntervalLongerThanThePreRollIsShortened() throws {
        let directory = try TemporaryDirectory()
        let r = try Tools.run(Tools.vtrecord, ["--test-pattern", "--size", "320x240", "--frames", "90", "--keyint", "4s",
                                               "--events", "e-{n}.mp4", "--pre-roll", "1s",
                                               "--json-summary", "s.json"], cwd: directory.url)
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("--keyint 4s is longer than --pre-roll 1s"), "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: directory.url.appendingPathComponent("s.json"))) as? [String: Any])
        #expect((summary["settings"] as? [String: Any])?["keyint"] as? Int == 30)
        #expect(summary["keyframes"] as? Int == 3)
    }

    /// Signals, the control socket and HTTP ask through one path: without --events, SIGUSR1 and
    /// the socket's `event` are refused in the same words, and the socket's `stop` finishes the
    /// recording as SIGTERM does, with a file that plays to its last frame.
    @Test func theSocketAndSignalsAskThroughOnePath() throws {
        let camera = try FakeCamera()
        let socketPath = camera.file("ctl")
        let output = camera.file("all.mp4")
        let child = try ChildProcess([Tools.vtrecord,
                                      "--device", camera.path, "--format", "nv12", "--size", "640x480",
                                      "--speed", "ultrafast", "--duration", "60s", "-o", output,
                                      "--control-socket", socketPath, "--json-summary", camera.file("summary.json")],
                                     environment: try camera.environment())
        let control = try #require(ControlClient.connecting(to: socketPath), "no control socket at \(socketPath)")
        while try #require(try control.status()["frames_captured"] as? Int) < 10 { usleep(50_000) }
        let refused = try control.ask("event door")
        let why = try #require(refused["error"] as? String, "\(refused)")
        #expect(refused["ok"] as? Bool == false && why.contains("--events"), "\(refused)")
        child.send(SIGUSR1)
        #expect(child.waitForStandardError(containing: "SIGUSR1 asks for an event clip: \(why)"), "\(child.standardErrorSoFar)")
        #expect(try control.ask("stop")["ok"] as? Bool == true)
        let r = child.wait()
        try #require(r.status == 0, "\(r.standardError)")
        #expect(r.standardError.contains("the control socket's stop: finishing the recording"), "\(r.standardError)")
        let summary = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: camera.file("summary.json")))) as? [String: Any])
        #expect(summary["stop_reason"] as? String == "signal", "\(summary)")
        let frames = try #require(summary["frames_encoded"] as? Int)
        #expect(frames >= 10 && frames < 1800, "\(frames)")
        #expect(try Self.counters(output).count == frames)
    }

    @Test func aControlSocketPathThatIsNotASocketIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ctl")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: path))
        let r = try Tools.run(Tools.vtrecord, ["--test-pattern", "--frames", "1", "-o", directory.path("x.h264"),
                                               "--control-socket", path])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("not a socket"), "\(r.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep")
    }
}

/// A client of the control socket: one line out, one line of JSON back.
struct ControlClient {
    let fd: Int32

    /// A client of the socket at `path` once it is there, within `seconds`; nil if it never was.
    static func connecting(to path: String, within seconds: Double = 10) -> ControlClient? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let client = try? ControlClient(path: path) { return client }
            usleep(50_000)
        }
        return nil
    }

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw SystemError(call: "connect(\(path))", errno: errno)
        }
    }

    func ask(_ line: String) throws -> [String: Any] {
        let bytes = Array((line + "\n").utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw SystemError(call: "send", errno: errno)
        }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            if byte == UInt8(ascii: "\n") { break }
            answer.append(byte)
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any], "\(answer)")
    }

    func status() throws -> [String: Any] {
        try #require(try ask("status")["status"] as? [String: Any])
    }
}
