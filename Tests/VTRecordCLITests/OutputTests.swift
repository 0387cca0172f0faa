import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where the stream goes: pipes, devices, full disks, readers that leave early. Every output
/// fault ends with exit 5 and one line saying what happened; a regular file ends at its last
/// complete access unit, and when segmenting, the files before the one that failed are
/// complete and untouched.
@Suite struct OutputTests {
    /// The lines vtrecord printed as errors.
    static func errorLines(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("vtrecord: error:") }
    }

    /// A 3 s, 30 fps, 320x240 Y4M whose last second is noise: a segment of it is 20 times the
    /// size of one from the first two seconds.
    static func growingInput(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.path("grow.y4m")
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi",
                                         "-i", "testsrc2=s=320x240:r=30:d=3,noise=alls=60:allf=t+u:enable='gte(t,2)'",
                                         "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", path])
        try #require(r.status == 0, "\(r.stderr)")
        return path
    }

    /// The command line as an unprivileged user when the tests run as root, who may write
    /// anywhere: a directory without write permission means nothing to root.
    static func unprivileged(_ arguments: [String]) -> [String] {
        getuid() == 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + arguments : arguments
    }

    @Test func standardOutputCarriesOnlyTheStream() throws {
        let r = try Tools.shell("\"$VTRECORD\" --test-pattern --size 320x240 --frames 20 -o - | ffprobe -v error -count_frames -show_entries stream=codec_name,nb_read_frames,width,height -of json -i -")
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        #expect(stream["codec_name"] as? String == "h264")
        #expect(stream["width"] as? Int == 320)
        #expect(stream["nb_read_frames"] as? String == "20")
    }

    @Test func readerThatExitsEarlyEndsWithExitFive() throws {
        // `head` leaves after 1000 bytes; the next write gets EPIPE (SIGPIPE is ignored).
        let r = try Tools.shell("\"$VTRECORD\" --test-pattern --size 640x480 --frames 300 -o - | head -c 1000 > /dev/null; echo \"status=${PIPESTATUS[0]}\" >&2")
        #expect(r.stderr.contains("status=5"), "\(r.stderr)")
        #expect(r.stderr.contains("pipe was closed"))
        #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Crash"))
        #expect(Self.errorLines(r.stderr) == ["vtrecord: error: standard output: the reading end of the pipe was closed"],
                "\(r.stderr)")
    }

    @Test func fullDeviceEndsWithExitFive() throws {
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10", "-o", "/dev/full"])
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("no space left"))
        #expect(Self.errorLines(r.stderr).count == 1, "\(r.stderr)")
        let quiet = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10", "-o", "/dev/full", "--quiet"])
        #expect(quiet.status == 5)
        #expect(quiet.stderr == "vtrecord: error: /dev/full: no space left on the device\n", "one line: \(quiet.stderr)")
    }

    @Test func devNullIsWrittenWithoutOverwrite() throws {
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10", "-o", "/dev/null", "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func unwritableDirectoryEndsWithExitFive() throws {
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10",
                                    "-o", "/nonexistent-dir/out.h264"])
        #expect(r.status == 5)
        #expect(r.stderr.contains("/nonexistent-dir/out.h264") && r.stderr.contains("directory does not exist"))
        #expect(Self.errorLines(r.stderr).count == 1, "\(r.stderr)")

        // A directory that exists but may not be written to.
        let dir = try TemporaryDirectory()
        let readOnly = dir.path("read-only")
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o555])
        let out = readOnly + "/out.h264"
        let denied = try Tools.run("/usr/bin/env", Self.unprivileged([Tools.vtrecord, "--test-pattern", "--size", "320x240",
                                                                      "--frames", "10", "-o", out, "--quiet"]))
        #expect(denied.status == 5, "\(denied.stderr)")
        #expect(denied.stderr == "vtrecord: error: cannot create \(out): no permission to write there\n", "\(denied.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func fileSizeLimitLeavesWholeAccessUnits() throws {
        // RLIMIT_FSIZE: write(2) fails with EFBIG (SIGXFSZ is ignored); the file must end at its
        // last complete access unit, so every byte in it decodes.
        let dir = try TemporaryDirectory()
        let path = dir.path("limited.h264")
        // One encoder thread in both recordings, which are compared byte for byte (`Tools.reproducible`).
        let r = try Tools.shell("ulimit -f 100; \"$VTRECORD\" --test-pattern --size 640x480 --frames 300 --keyint 30 "
                                + "\(Tools.reproducible.joined(separator: " ")) -o '\(path)'")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("size limit"))
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decode.status == 0)
        #expect(decode.stderr.isEmpty, "the cut file does not decode cleanly: \(decode.stderr)")
        #expect(try Tools.frameMD5s(path).count > 0)
        #expect(Self.errorLines(r.stderr) == ["vtrecord: error: \(path): file size limit reached; the file ends at the last complete frame"],
                "\(r.stderr)")
        // The same recording without the limit: the cut file is exactly its beginning, up to
        // where an access unit starts.
        let whole = dir.path("whole.h264")
        let reference = try Tools.vtrecord(["--test-pattern", "--size", "640x480", "--frames", "300", "--keyint", "30",
                                            "-o", whole, "--quiet"] + Tools.reproducible)
        try #require(reference.status == 0, "\(reference.stderr)")
        let integrity = try StreamIntegrity.check(path)
        #expect(integrity.pictures > 10)
        #expect(try StreamIntegrity.isPrefixAtAccessUnitBoundary(path, of: whole))
    }

    @Test func fileSizeLimitInASegmentLeavesTheOnesBeforeItUntouched() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.growingInput(dir)
        try FileManager.default.createDirectory(atPath: dir.path("whole"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir.path("cut"), withIntermediateDirectories: false)
        // One encoder thread in both, whose segments are compared byte for byte (`Tools.reproducible`).
        let reference = try Tools.vtrecord(["--input", input, "--segment-time", "1s", "--keyint", "15",
                                            "-o", dir.path("whole/seg-{n}.h264"), "--quiet"] + Tools.reproducible)
        try #require(reference.status == 0, "\(reference.stderr)")
        // 200 KiB: room for each of the first two segments (about 40 kB), not for the third.
        let r = try Tools.shell("ulimit -f 200; \"$VTRECORD\" --input '\(input)' --segment-time 1s --keyint 15 "
                                + "\(Tools.reproducible.joined(separator: " ")) "
                                + "-o '\(dir.path("cut/seg-{n}.h264"))' --quiet --json-summary '\(dir.path("summary.json"))'")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr == "vtrecord: error: \(dir.path("cut/seg-2.h264")): file size limit reached; "
                + "the file ends at the last complete frame\n", "one line: \(r.stderr)")
        for name in ["seg-0.h264", "seg-1.h264"] {
            #expect(FileManager.default.contentsEqual(atPath: dir.path("cut/" + name), andPath: dir.path("whole/" + name)),
                    "\(name) differs from the same segment recorded without a limit")
        }
        let cut = dir.path("cut/seg-2.h264")
        let integrity = try StreamIntegrity.check(cut)
        #expect(integrity.pictures > 0 && integrity.pictures < 30, "\(integrity.pictures) pictures")
        #expect(try StreamIntegrity.isPrefixAtAccessUnitBoundary(cut, of: dir.path("whole/seg-2.h264")))
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("summary.json"))))
        #expect((summary as? [String: Any])?["segments"] as? [String] == (0...2).map { dir.path("cut/seg-\($0).h264") })
    }

    @Test func fileSizeLimitOnTheFirstFrameOfASegmentLeavesNoEmptyFile() throws {
        let dir = try TemporaryDirectory()
        let input = try Self.growingInput(dir)
        // 0.2 s segments: the clean ones take about 11 kB, the first noisy picture alone 34 kB.
        let r = try Tools.shell("ulimit -f 20; \"$VTRECORD\" --input '\(input)' --segment-time 0.2s "
                                + "-o '\(dir.path("seg-{n:02}.h264"))' --quiet")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(Self.errorLines(r.stderr).count == 1 && r.stderr.contains("seg-10.h264: file size limit reached"),
                "\(r.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("seg-") }.sorted()
        #expect(names == (0..<10).map { String(format: "seg-%02d.h264", $0) })
        for name in names { try StreamIntegrity.check(dir.path(name)) }
    }

    @Test func aDirectoryThatBecomesUnwritableStopsAtTheNextSegment() throws {
        let dir = try TemporaryDirectory()
        let segments = dir.path("segments")
        try FileManager.default.createDirectory(atPath: segments, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o777])
        // Paced like a camera, so the second segment starts a second after the first.
        let child = try ChildProcess(Self.unprivileged(
            [Tools.vtrecord, "--test-pattern", "--realtime", "--size", "320x240", "--fps", "30", "--segment-time", "1s",
             "--speed", "ultrafast", "-o", segments + "/seg-{n}.h264", "--quiet", "--json-summary", "-"]),
            environment: ProcessInfo.processInfo.environment)
        let first = segments + "/seg-0.h264"
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: first) && child.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        try #require(chmod(segments, 0o555) == 0)
        let result = child.wait(timeout: .seconds(30))
        #expect(result.status == 5, "\(result.transcript)")
        #expect(result.standardError == "vtrecord: error: cannot create \(segments)/seg-1.h264: no permission to write there\n",
                "one line: \(result.transcript)")
        try StreamIntegrity.check(first)
        // The first second, in order. A picture that came too late for its place on the frame
        // grid (--realtime keeps constant frame timing) has the one before it repeated there,
        // and the summary counts it.
        let counters = try Tools.counters(first, width: 320).map { try #require($0) }
        #expect(counters.first == 0 && counters.allSatisfy { $0 < 30 } && zip(counters, counters.dropFirst()).allSatisfy { $0 <= $1 },
                "\(counters)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
        let repeated = zip(counters, counters.dropFirst()).filter { $0 == $1 }.count
        #expect(repeated <= json["frames_duplicated"] as? Int ?? 0, "\(counters), \(json)")
        #expect(json["segments"] as? [String] == [first])
        let size = try FileManager.default.attributesOfItem(atPath: first)[.size] as? Int
        #expect(json["bytes"] as? Int == size, "the first segment is all that was written")
    }

    /// A run that writes no frame removes the timestamp file it made, and only that: a file
    /// that was there before (or a device such as /dev/null) stays.
    @Test func aFailedRunRemovesOnlyATimestampFileItMade() throws {
        let dir = try TemporaryDirectory()
        let existing = dir.path("existing.txt")
        try Data("old".utf8).write(to: URL(fileURLWithPath: existing))
        let failing = ["--test-pattern", "--size", "160x120", "--frames", "3", "-o", dir.path("missing-dir/out.h264")]
        let kept = try Tools.vtrecord(failing + ["--timestamps", existing, "--overwrite"])
        #expect(kept.status == 5, "\(kept.stderr)")
        #expect(FileManager.default.fileExists(atPath: existing))
        let made = dir.path("made.txt")
        let removed = try Tools.vtrecord(failing + ["--timestamps", made])
        #expect(removed.status == 5, "\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: made))
    }
}
