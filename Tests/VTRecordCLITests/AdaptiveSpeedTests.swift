import Foundation
import Testing
import VTTestSupport

/// `--realtime adaptive` (the default for cameras): an encoder too slow for the camera at
/// `--speed` runs at faster settings, climbs as far as the machine allows, and drops nothing
/// once settled; with `--realtime drop` it keeps its speed and drops as before. A device that
/// slows down for a while makes it step faster, and back once it is free.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture. make test
/// runs it on its own, after the rest: what the encoder costs is what these tests control, and
/// the other tests' load on the cores would add to it.
extension CameraRecordingTests {
    @Suite struct AdaptiveSpeedTests {
        /// A settling time: after it, no frame may be dropped.
        static let settling = 2.0

        struct Recording {
            var summary: [String: Any]
            /// The camera's frame numbers read back from the file's pictures, in file order.
            var counters: [Int]
            /// The camera's frame numbers not in the file.
            var missing: [Int]

            func count(_ key: String) -> Int { summary[key] as? Int ?? -1 }
            var speed: [String: Any]? { summary["speed"] as? [String: Any] }
            /// Capture → written, the median: how long the encoder holds a picture (its lookahead).
            var latency: Double { (summary["latency_ms_p50"] as? Double ?? .infinity) / 1000 }
        }

        /// The camera through the fake VA-API driver, whose pictures cost what their quality level
        /// says: level 4 (what `--speed medium` picks of seven) takes 50 ms, more than the 33 ms
        /// between frames; level 6 takes 25 ms and level 7 12 ms. Between 5 s and 9 s the device
        /// is shared and every picture costs twice as much, so only level 7 keeps up.
        static func recordThroughVAAPI(_ mode: String, seconds: Int) throws -> (Recording, FakeVADevice.Report) {
            let camera = try FakeCamera(knobs: [.formats("NV12:320x240@30")])
            let va = try FakeVADevice(knobs: [.levelMilliseconds([90, 80, 70, 50, 40, 25, 12]),
                                              .busy(fromMilliseconds: 5000, toMilliseconds: 9000, factor: 2)])
            let output = camera.file("out.mp4")
            let summaryPath = camera.file("summary.json")
            let r = try ChildProcess.run(
                [Tools.vtrecord, "--device", camera.path, "--size", "320x240", "--fps", "30", "--encoder", "vaapi",
                 "--va-device", va.devicePath, "--speed", "medium", "--realtime", mode, "--duration", "\(seconds)s",
                 "-o", output, "--json-summary", summaryPath, "--quiet"],
                environment: try va.environment(base: try camera.environment()), timeout: .seconds(120))
            try #require(r.status == 0, "\(r.transcript)")
            let summary = try #require(try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: summaryPath))) as? [String: Any])
            let counters = try Tools.counters(output, width: 320).map { try #require($0, "a picture without its frame code") }
            let missing = Set(0...(counters.max() ?? 0)).subtracting(counters).sorted()
            return (Recording(summary: summary, counters: counters, missing: missing), try va.report())
        }

        @Test func aHardwareEncoderStepsItsQualityLevelAndBackWhenTheDeviceIsFreeAgain() throws {
            let (dropping, heldReport) = try Self.recordThroughVAAPI("drop", seconds: 4)
            #expect(dropping.count("dropped_queue") > 20, "level 4 kept up: \(dropping.summary)")
            #expect(Set(heldReport.picturesByQualityLevel.keys) == [4], "\(heldReport.picturesByQualityLevel)")

            let (adaptive, report) = try Self.recordThroughVAAPI("adaptive", seconds: 18)
            let late = adaptive.missing.filter { Double($0) / 30 > Self.settling }
            #expect(late.isEmpty, "frames dropped after \(Self.settling) s: \(late.map { Double($0) / 30 })")
            #expect(adaptive.count("dropped_queue") == adaptive.missing.count, "\(adaptive.summary)")
            let speed = try #require(adaptive.speed, "\(adaptive.summary)")
            #expect(speed["steps"] as? [String] == ["level 4", "level 5", "level 6", "level 7"])
            let history = try #require(speed["history"] as? [[String: Any]]).compactMap { change -> (at: Double, level: Int)? in
                guard let at = change["at"] as? Double, let name = change["speed"] as? String,
                      let level = Int(name.dropFirst("level ".count)) else { return nil }
                return (at, level)
            }
            // The share of a span spent at a level or slower (a better picture), from the changes;
            // level 7, the fastest, from the start.
            func share(from start: Double, to end: Double, atOrBelow limit: Int) -> Double {
                var time = start
                var current = history.last { $0.at <= start }?.level ?? 7
                var inside = 0.0
                for change in history where change.at > start && change.at < end {
                    if current <= limit { inside += change.at - time }
                    time = change.at
                    current = change.level
                }
                if current <= limit { inside += end - time }
                return inside / (end - start)
            }
            #expect(history.contains { $0.at < 5 && $0.level <= 6 }, "it climbed before the device was shared: \(history)")
            #expect(share(from: 6, to: 9, atOrBelow: 6) < 0.2, "only level 7 keeps up while the device is shared: \(history)")
            #expect(history.contains { $0.at > 9 && $0.level <= 6 }, "it stepped back once the device was free: \(history)")
            #expect(share(from: 15, to: 18, atOrBelow: 6) > 0.7, "it ended at a level slower than 7: \(history)")
            // The driver coded pictures at the levels the summary names.
            #expect(report.picturesByQualityLevel[6, default: 0] > 30 && report.picturesByQualityLevel[7, default: 0] > 30,
                    "\(report.picturesByQualityLevel)")
        }

        /// x264 at `--speed placebo` on 320x240 at 30 fps codes 13 to 22 pictures a second on
        /// this machine's two cores, as busy as they are; its fastest step, several times 30.
        static func record(_ mode: String, seconds: Int = 8, width: Int = 320, height: Int = 240) throws -> Recording {
            let size = "\(width)x\(height)"
            let camera = try FakeCamera(knobs: [.formats("YUYV:\(size)@30"), .noise(amplitude: 8)])
            let output = camera.file("out.mp4")
            let summaryPath = camera.file("summary.json")
            let r = try ChildProcess.run(
                [Tools.vtrecord, "--device", camera.path, "--size", size, "--fps", "30", "--encoder", "x264",
                 "--speed", "placebo", "--realtime", mode, "--duration", "\(seconds)s", "-o", output,
                 "--json-summary", summaryPath, "--quiet"],
                environment: try camera.environment(), timeout: .seconds(120))
            try #require(r.status == 0, "\(r.transcript)")
            let summary = try #require(try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: summaryPath))) as? [String: Any])
            let counters = try Tools.counters(output, width: width).map { try #require($0, "a picture without its frame code") }
            let missing = Set(0...(counters.max() ?? 0)).subtracting(counters).sorted()
            return Recording(summary: summary, counters: counters, missing: missing)
        }

        @Test func anEncoderTooSlowForTheCameraAdaptsAndDropsNothingOnceSettled() throws {
            // Dropping at 640x480 for 8 s: placebo codes 320x240 at 13 to 22 pictures a second
            // here, as busy as the machine is, and x264 takes in its 60-picture lookahead and more
            // before it makes the camera's frames wait, so a short run at 320x240 may never fill
            // the queue. At four times the pixels it falls behind whatever the load.
            let dropping = try Self.record("drop", seconds: 8, width: 640, height: 480)
            #expect(dropping.count("dropped_queue") > 10, "placebo kept up without adapting: \(dropping.summary)")
            #expect(dropping.speed == nil)
            let dropTimes = dropping.missing.map { Double($0) / 30 }
            #expect((dropTimes.last ?? 0) > 7, "--realtime drop drops to the end: \(dropTimes)")

            let adaptive = try Self.record("adaptive")
            // It starts at the fastest step and climbs; x264 holds a picture for its lookahead
            // (60 frames at placebo) before it codes it, so the settling counts from when the
            // first pictures come out.
            let settled = adaptive.latency + Self.settling
            let late = adaptive.missing.filter { Double($0) / 30 > settled }
            #expect(late.isEmpty, "frames dropped after \(settled) s: \(late.map { Double($0) / 30 })")
            #expect(adaptive.count("dropped_queue") == adaptive.missing.count, "\(adaptive.summary)")
            #expect(adaptive.count("frames_duplicated") == 0)
            #expect(adaptive.counters == adaptive.counters.sorted() && Set(adaptive.counters).count == adaptive.counters.count)
            let speed = try #require(adaptive.speed, "\(adaptive.summary)")
            #expect(speed["slowest"] as? String == "placebo")
            #expect(speed["last"] as? String != "placebo")
            #expect((speed["changes"] as? Int ?? 0) >= 1)
            let seconds = try #require(speed["seconds"] as? [String: Double])
            #expect(abs(seconds.values.reduce(0, +) - 8) < 1, "\(seconds)")
            let settings = try #require(adaptive.summary["settings"] as? [String: Any])
            #expect(settings["realtime_mode"] as? String == "adaptive" && settings["speed"] as? String == "placebo")
        }
    }
}
