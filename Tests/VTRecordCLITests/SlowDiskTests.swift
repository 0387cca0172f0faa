import Foundation
import Testing
import VTTestSupport

/// A disk that makes fsync and unlink wait (`StallingDisk`), as a busy or slow disk does, costs
/// a live recording no frame: a finished segment's last bytes, its index and its fdatasync,
/// and the deletion of an old segment, happen off the encoder thread.
@Suite struct SlowDiskTests {
    /// Four times what the recording's queue of four frames at 30 fps can bridge.
    static let stall = Duration.milliseconds(600)

    /// A folder with the stalling disk mounted at `mount`, over `backing`.
    static func stallingDisk() throws -> (TemporaryDirectory, StallingDisk) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("backing"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir.path("mount"), withIntermediateDirectories: false)
        return (dir, try StallingDisk(backing: dir.path("backing"), mountPoint: dir.path("mount"), stall: stall))
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return start.duration(to: clock.now)
    }

    /// The double against programs we did not write: dd's fdatasync and rm wait the stall, and
    /// what dd wrote is in the backing folder byte for byte.
    @Test func theDiskStallsSyncsAndDeletionsAndKeepsWhatIsWritten() throws {
        let (dir, disk) = try Self.stallingDisk()
        let written = dir.path("mount/proof")
        var copy = ProcessResult(status: -1, stdout: Data(), stderr: "")
        let synced = try Self.seconds {
            copy = try Tools.run("dd", ["if=/dev/urandom", "of=\(written)", "bs=4k", "count=8", "conv=fdatasync"])
        }
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(synced >= Self.stall, "dd's fdatasync took \(synced)")
        #expect(FileManager.default.contentsEqual(atPath: written, andPath: dir.path("backing/proof")))
        var removal = ProcessResult(status: -1, stdout: Data(), stderr: "")
        let removed = try Self.seconds { removal = try Tools.run("rm", [written]) }
        #expect(removal.status == 0 && removed >= Self.stall, "rm took \(removed): \(removal.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("backing/proof")))
        let counts = try disk.stop()
        #expect(counts.syncs >= 1 && counts.unlinks == 1, "\(counts)")
    }

    /// MP4 segments of a second, the oldest deleted (`--max-files 2`), onto the stalling disk
    /// at `--realtime drop` with a queue of four frames: nothing is dropped, no write holds the
    /// encoder thread near the stall, and the files kept are finalized and whole.
    @Test func aDiskThatStallsCostsALiveRecordingNoFrame() throws {
        let (dir, disk) = try Self.stallingDisk()
        let summaryPath = dir.path("summary.json")
        let run = try Tools.run(Tools.vtrecordAboveTheSuite[0], Array(Tools.vtrecordAboveTheSuite.dropFirst()) + [
            "--test-pattern", "--realtime", "drop", "--size", "320x240", "--fps", "30", "--keyint", "15",
            "--duration", "3s", "--segment-time", "1s", "--max-files", "2", "--quiet",
            "--json-summary", summaryPath, "-o", dir.path("mount/seg-{n}.mp4")])
        let counts = try disk.stop()
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try SegmentTests.json(summaryPath)
        #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
        let longestWrite = summary["write_ms_max"] as? Double ?? .infinity
        #expect(longestWrite < Double(Self.stall / .milliseconds(1)) / 2, "\(summary)")
        #expect(summary["finalized"] as? Bool == true, "\(summary)")
        #expect(summary["frames_encoded"] as? Int == 90, "\(summary)")
        // Three files finished with an fdatasync each, the first deleted.
        #expect(counts.syncs >= 3 && counts.unlinks == 1, "\(counts)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: dir.path("backing")).sorted()
        #expect(kept == ["seg-1.mp4", "seg-2.mp4"])
        for name in kept {
            let path = dir.path("backing/\(name)")
            let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "\(name): \(decode.stderr)")
            let probe = try Tools.ffprobe(path, ["-count_frames", "-show_entries", "stream=nb_read_frames"])
            let streams = probe["streams"] as? [[String: Any]]
            #expect(streams?.first?["nb_read_frames"] as? String == "30", "\(name): \(probe)")
        }
    }
}
