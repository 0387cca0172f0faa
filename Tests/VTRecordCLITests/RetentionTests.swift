import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--keep-size`, `--keep-age`, `--keep-free`: which files go, and which never do, with the
/// test pattern writing segments as fast as it can. Free space is tried on a tmpfs of its own,
/// small enough that the recording fills it several times over.
@Suite struct RetentionTests {
    /// Records the test pattern into `directory` and returns the result and the summary.
    static func record(in directory: TemporaryDirectory, frames: Int = 300, _ arguments: [String]) throws
        -> (ProcessResult, [String: Any]) {
        let summary = directory.path("summary.json")
        let r = try Tools.run(Tools.vtrecord, ["--test-pattern", "--size", "320x240", "--frames", "\(frames)",
                                               "--speed", "ultrafast", "--json-summary", summary] + arguments,
                              cwd: directory.url)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: summary))) ?? Data()
        try? FileManager.default.removeItem(atPath: summary)
        return (r, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    /// A file of `bytes` bytes modified `age` seconds ago.
    static func plant(_ path: String, bytes: Int, age: Double) throws {
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
        let when = Date().addingTimeInterval(-age)
        try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: path)
    }

    static func files(_ directory: TemporaryDirectory) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path))
    }

    static func retention(_ summary: [String: Any]) throws -> [String: Any] {
        try #require(summary["retention"] as? [String: Any], "\(summary)")
    }

    /// By size: the oldest of the template's files go, earlier runs' first, until what is left
    /// (the file being written included) fits; other files in the folder stay.
    @Test func sizeDeletesTheOldestOfTheTemplatesFilesOnly() throws {
        let directory = try TemporaryDirectory()
        for (n, hours) in [(0, 5.0), (1, 4.0), (2, 3.0)] {
            try Self.plant(directory.path("cam-2026010\(n)-000000-0.mp4"), bytes: 200_000, age: hours * 3600)
        }
        try Self.plant(directory.path("notes.mp4"), bytes: 10, age: 86_400 * 30)
        try Self.plant(directory.path("cam-holiday.mp4"), bytes: 10, age: 86_400 * 30)
        let (r, summary) = try Self.record(in: directory, ["-o", "cam-%Y%m%d-%H%M%S-{n}.mp4", "--segment-time", "2s",
                                                           "--keep-size", "300k"])
        try #require(r.status == 0, "\(r.stderr)")
        let left = try Self.files(directory)
        #expect(left.isSuperset(of: ["notes.mp4", "cam-holiday.mp4"]), "a file the template cannot make went: \(left)")
        #expect(left.isDisjoint(with: ["cam-20260100-000000-0.mp4", "cam-20260101-000000-0.mp4", "cam-20260102-000000-0.mp4"]))
        let kept = left.filter { $0.hasPrefix("cam-2") }
        let bytes = try kept.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: directory.path($1))[.size] as! Int) }
        // The last file was open when the last sweep ran at its close, so it may pass the bound alone.
        #expect(bytes <= 300_000 + 200_000, "\(kept)")
        let retention = try Self.retention(summary)
        #expect(retention["files_deleted"] as? Int ?? 0 >= 3)
        let deleted = (retention["deleted"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
        #expect(Array(deleted.prefix(3)) == ["cam-20260100-000000-0.mp4", "cam-20260101-000000-0.mp4",
                                            "cam-20260102-000000-0.mp4"], "oldest first: \(deleted)")
        #expect((retention["deleted"] as? [[String: Any]])?.allSatisfy { $0["reason"] as? String == "size" } == true)
        #expect(r.stderr.contains("deleted cam-20260100-000000-0.mp4"), "\(r.stderr)")
    }

    /// By age, at start: what a run left days ago goes before anything is recorded; a younger
    /// file stays; and a second run (a restart) applies the same rule to the first run's files.
    @Test func ageAppliesAtStartAndAcrossARestart() throws {
        let directory = try TemporaryDirectory()
        // Names the template makes (at 01:01:01 and 02:02:02), so they are the recording's own.
        let old = "rec-010101-0.mkv", young = "rec-020202-0.mkv"
        try Self.plant(directory.path(old), bytes: 1000, age: 3 * 86_400)
        try Self.plant(directory.path(young), bytes: 1000, age: 3600)
        let arguments = ["-o", "rec-%H%M%S-{n}.mkv", "--segment-time", "5s", "--keep-age", "2d"]
        var (r, summary) = try Self.record(in: directory, arguments)
        try #require(r.status == 0, "\(r.stderr)")
        var left = try Self.files(directory)
        #expect(!left.contains(old) && left.contains(young), "\(left)")
        #expect((try Self.retention(summary)["deleted"] as? [[String: Any]])?.first?["reason"] as? String == "age")
        // The first run's files, aged by the test, go at the next start.
        let first = left.filter { $0.hasPrefix("rec-") && $0 != young }
        try #require(first.count == 2, "\(left)")
        for name in first { try Self.plant(directory.path(name), bytes: 1000, age: 3 * 86_400) }
        sleep(1)
        (r, summary) = try Self.record(in: directory, arguments)
        try #require(r.status == 0, "\(r.stderr)")
        left = try Self.files(directory)
        #expect(left.isDisjoint(with: first), "\(left)")
        #expect(left.contains(young))
        #expect(try Self.retention(summary)["files_deleted"] as? Int == 2)
    }

    /// The file being written is never deleted, however far over the bound it is.
    @Test func theOpenFileIsNeverDeleted() throws {
        let directory = try TemporaryDirectory()
        let (r, summary) = try Self.record(in: directory, ["-o", "one-%H%M%S.mp4", "--keep-size", "1k", "--keep-age", "1s"])
        try #require(r.status == 0, "\(r.stderr)")
        let output = try #require((summary["segments"] as? [String])?.first)
        #expect(try Tools.frameMD5s(directory.path(output)).count == 300)
    }

    /// A 12 MB file system written many times over: under --keep-free the recording never
    /// finds it full (the oldest segments go, the continuous recording's before the clips'), and
    /// a segment bigger than what is free makes room as it is written.
    @Test func keepFreeOnASmallFileSystemNeverEndsTheRecording() throws {
        let directory = try TemporaryDirectory()
        let disk = try SmallFileSystem(directory.path("disk"), megabytes: 12)
        defer { disk.unmount() }
        let mount = disk.path
        let (r, summary) = try Self.record(in: directory, frames: 3000, [
            "--size", "640x480", "--rate-control", "cqp", "--qp", "8",
            "-o", "disk/seg-%H%M%S-{n}.mkv", "--segment-time", "10s", "--keep-free", "500k"])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(summary["frames_encoded"] as? Int == 3000)
        let retention = try Self.retention(summary)
        let written = try #require(summary["bytes"] as? Int)
        #expect(written > 24_000_000, "the disk was not filled twice over: \(written) bytes")
        #expect(retention["files_deleted"] as? Int ?? 0 >= 5, "\(retention)")
        #expect(retention["room_made_for_writes"] as? Int ?? 0 >= 1, "no write found the disk full: \(retention)")
        // Every segment left plays whole.
        let left = try FileManager.default.contentsOfDirectory(atPath: mount).filter { $0.hasSuffix(".mkv") }
        try #require(!left.isEmpty)
        for name in left { #expect(try Tools.frameMD5s(mount + "/" + name).count == 300, "\(name)") }
    }

    /// `make test-long`: a live camera recording for three minutes onto a 12 MB tmpfs, in 5 s
    /// segments, with clips from SIGUSR1 beside it, under --keep-free: no error, no frame
    /// dropped, the disk filled many times over, and what is left plays.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["VTRECORD_LONG"] == "1", "make test-long"))
    func keepFreeHoldsForMinutesOnALiveCamera() throws {
        let directory = try TemporaryDirectory()
        let disk = try SmallFileSystem(directory.path("disk"), megabytes: 12)
        defer { disk.unmount() }
        let camera = try FakeCamera(knobs: [.noise(amplitude: 8), .signalAt([600, 2400, 4200])])
        let summaryPath = directory.path("summary.json")
        let r = try Tools.run(Tools.vtrecord, [
            "--device", camera.path, "--format", "nv12", "--size", "640x480", "--speed", "ultrafast",
            "--rate-control", "cbr", "--bitrate", "2M", "--duration", "180s", "--quiet",
            "-o", disk.path + "/seg-%H%M%S-{n}.mkv", "--segment-time", "5s",
            "--events", disk.path + "/clip-{n}.mp4", "--pre-roll", "5s", "--post-roll", "5s",
            "--keep-free", "1M", "--json-summary", summaryPath], environment: try camera.environment())
        try #require(r.status == 0, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: summaryPath))) as? [String: Any])
        #expect(summary["dropped_queue"] as? Int == 0 && summary["dropped_driver"] as? Int == 0, "\(summary)")
        // 45 MB onto 12 MB; what must stay (the open segment and clip, and the newest finished of
        // each) is about 7 MB of it.
        #expect(summary["bytes"] as? Int ?? 0 > 40_000_000, "the disk was not filled many times over")
        #expect(try Self.retention(summary)["files_deleted"] as? Int ?? 0 >= 10)
        let clips = (summary["events"] as? [String: Any])?["clips"] as? [[String: Any]] ?? []
        #expect(clips.count == 3 && clips.allSatisfy { $0["state"] as? String == "finished" }, "\(clips)")
        for name in try FileManager.default.contentsOfDirectory(atPath: disk.path) {
            #expect(try Tools.frameMD5s(disk.path + "/" + name).count > 0, "\(name)")
        }
    }

    /// For free space the continuous recording's files go before the clips, even older clips.
    @Test func freeSpaceTakesTheRecordingsFilesBeforeTheClips() throws {
        let directory = try TemporaryDirectory()
        let disk = try SmallFileSystem(directory.path("disk"), megabytes: 8)
        defer { disk.unmount() }
        let mount = disk.path
        for n in 0..<3 { try Self.plant(mount + "/clip-\(n).mp4", bytes: 1_200_000, age: Double(10 - n) * 86_400) }
        for n in 0..<3 { try Self.plant(mount + "/seg-0101\(n)0-\(n).mkv", bytes: 1_200_000, age: Double(5 - n) * 3600) }
        let (r, summary) = try Self.record(in: directory, frames: 30, [
            "-o", "disk/seg-%H%M%S-{n}.mkv", "--segment-time", "10s", "--events", "disk/clip-{n}.mp4",
            "--keep-free", "3M"])
        try #require(r.status == 0, "\(r.stderr)")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: mount))
        // 7.2 MB planted on 8 MiB leaves 1.2 MB free: two of the segments go, the clips stay.
        #expect(left.isSuperset(of: ["clip-0.mp4", "clip-1.mp4", "clip-2.mp4"]), "\(left)")
        #expect(!left.contains("seg-010100-0.mkv") && !left.contains("seg-010110-1.mkv"), "\(left)")
        let reasons = (try Self.retention(summary)["deleted"] as? [[String: Any]] ?? []).map { $0["reason"] as? String }
        #expect(!reasons.isEmpty && reasons.allSatisfy { $0 == "free" }, "\(reasons)")
    }

    @Test(arguments: [
        (["--keep-size", "1M"], "needs -o"),
        (["-o", "-", "--keep-size", "1M"], "standard output"),
        (["-o", "%Y/cam-{n}.mp4", "--segment-time", "1m", "--keep-age", "7d"], "one folder"),
        (["-o", "a.mp4", "--events-keep-size", "1M"], "add --events"),
        (["-o", "a.mp4", "--keep-free", "100%"], "--keep-free"),
        (["-o", "srt://127.0.0.1:9000", "--keep-free", "10%"], "stream"),
    ])
    func badRetentionOptionsAreRefused(arguments: [String], expected: String) throws {
        try Tools.expectRefused(arguments, saying: expected)
    }
}

/// A tmpfs of a few megabytes mounted for one test (root only); the test unmounts it.
struct SmallFileSystem {
    let path: String

    init(_ path: String, megabytes: Int) throws {
        try #require(getuid() == 0, "mounting a tmpfs for this test needs root")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = try Tools.run("mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        self.path = path
    }

    func unmount() { _ = try? Tools.run("umount", ["-l", path]) }
}
