import Foundation
import Testing
import VTTestSupport

/// `vtrecord remux`: the same access units in another container, with their times.
@Suite struct RemuxTests {
    static func times(_ path: String) throws -> [Double] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.compactMap { Double($0) }
    }

    /// .h264 + timestamps → MP4 → MKV → TS → .h264: the same bytes, and the same times, to the
    /// tick (Matroska's 10 µs units are finer than half a 90 kHz tick); the same without
    /// Matroska; and from Matroska straight back to a raw stream, to Matroska's 10 µs.
    @Test func roundTripKeepsAccessUnitsAndTimes() throws {
        let dir = try TemporaryDirectory()
        let raw = dir.path("a.h264")
        let log = dir.path("a.txt")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "60", "--speed", "veryfast",
                                    "--bframes", "3", "--keyint", "20", "--timing", "passthrough",
                                    "--timestamps", log, "--quiet", "-o", raw])
        try #require(r.status == 0, "\(r.stderr)")
        let steps: [[String]] = [
            [raw, "--timestamps", log, "-o", dir.path("b.mp4")],
            [dir.path("b.mp4"), "-o", dir.path("c.mkv")],
            [dir.path("c.mkv"), "-o", dir.path("d.ts")],
            [dir.path("d.ts"), "-o", dir.path("e.h264"), "--timestamps", dir.path("e.txt")],
            [dir.path("b.mp4"), "-o", dir.path("f.ts")],
            [dir.path("f.ts"), "-o", dir.path("g.h264"), "--timestamps", dir.path("g.txt")],
            [dir.path("c.mkv"), "-o", dir.path("h.h264"), "--timestamps", dir.path("h.txt")],
        ]
        for step in steps {
            let remux = try Tools.vtrecord(["remux"] + step)
            #expect(remux.status == 0, "remux \(step.joined(separator: " ")): \(remux.stderr)")
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: raw))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("e.h264"))) == original)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("g.h264"))) == original)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("h.h264"))) == original)
        let before = try Self.times(log)
        #expect(before.count == 60)
        // The log prints microseconds; a 90 kHz tick is 11.1 µs, so one microsecond apart is
        // the same tick and anything more is another. Straight out of Matroska the times are
        // its own, within half of its 10 µs unit.
        for (name, path, within) in [("MP4 → MKV → TS", "e.txt", 0.001), ("MP4 → TS", "g.txt", 0.001),
                                     ("MP4 → MKV", "h.txt", 0.005)] {
            let after = try Self.times(dir.path(path))
            #expect(after.count == 60, "\(name): \(after.count) times")
            for (index, (a, b)) in zip(before, after).enumerated() {
                #expect(abs(a - b) <= within, "frame \(index): \(a) ms, \(b) ms through \(name)")
            }
        }
        // Every container decodes to the raw stream's pictures.
        let reference = try Tools.frameMD5s(raw)
        for file in ["b.mp4", "c.mkv", "d.ts"] {
            #expect(try Tools.frameMD5s(dir.path(file)) == reference, "\(file)")
        }
    }

    /// A raw stream without a timestamps file gets n ÷ the rate in its SPS.
    @Test func rawStreamWithoutTimesTakesTheRateOrSPS() throws {
        let dir = try TemporaryDirectory()
        let raw = dir.path("a.h264")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "160x120", "--fps", "25", "--frames", "50",
                                    "--quiet", "-o", raw])
        try #require(r.status == 0, "\(r.stderr)")
        let remux = try Tools.vtrecord(["remux", raw, "-o", dir.path("a.mkv")])
        #expect(remux.status == 0, "\(remux.stderr)")
        let (format, stream) = try MP4OutputTests.probe(dir.path("a.mkv"))
        #expect(abs(MP4OutputTests.seconds(format["duration"]) - 2) <= 0.04, "\(format)")
        #expect(stream["nb_read_frames"] as? String == "50")
    }

    /// Damaged input: one line, exit 2.
    @Test func damagedInputIsOneLineAndExitTwo() throws {
        let dir = try TemporaryDirectory()
        let bad = dir.path("bad.mp4")
        try Data("not a movie at all".utf8).write(to: URL(fileURLWithPath: bad))
        let r = try Tools.vtrecord(["remux", bad, "-o", dir.path("out.mkv")])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(OutputTests.errorLines(r.stderr).count == 1, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.mkv")))
    }
}
