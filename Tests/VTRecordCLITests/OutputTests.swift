import Foundation
import Testing

/// Where the stream goes: pipes, devices, full disks, readers that leave early.
@Suite struct OutputTests {
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
    }

    @Test func fullDeviceEndsWithExitFive() throws {
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "10", "-o", "/dev/full"])
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("no space left"))
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
    }

    @Test func fileSizeLimitLeavesWholeAccessUnits() throws {
        // RLIMIT_FSIZE: write(2) fails with EFBIG (SIGXFSZ is ignored); the file must end at its
        // last complete access unit, so every byte in it decodes.
        let dir = try TemporaryDirectory()
        let path = dir.path("limited.h264")
        let r = try Tools.shell("ulimit -f 100; \"$VTRECORD\" --test-pattern --size 640x480 --frames 300 --keyint 30 -o '\(path)'")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("size limit"))
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decode.status == 0)
        #expect(decode.stderr.isEmpty, "the cut file does not decode cleanly: \(decode.stderr)")
        #expect(try Tools.frameMD5s(path).count > 0)
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
