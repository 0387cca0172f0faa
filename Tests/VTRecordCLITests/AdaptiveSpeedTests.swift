import Foundation
import Testing
import VTTestSupport

/// `--realtime adaptive` (the default for cameras): an encoder too slow for the camera steps to
/// faster settings before the queue overflows, settles, and drops nothing after; with
/// `--realtime drop` it keeps its speed and drops as before.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture.
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

        /// x264 at `--speed placebo` on 320x240 at 30 fps codes about 13 pictures a second on
        /// this machine's two cores; its fastest step, several times 30.
        static func record(_ mode: String, seconds: Int = 8) throws -> Recording {
            let camera = try FakeCamera(knobs: [.formats("YUYV:320x240@30"), .noise(amplitude: 8)])
            let output = camera.file("out.mp4")
            let summaryPath = camera.file("summary.json")
            let r = try ChildProcess.run(
                [Tools.vtrecord, "--device", camera.path, "--size", "320x240", "--fps", "30", "--encoder", "x264",
                 "--speed", "placebo", "--realtime", mode, "--duration", "\(seconds)s", "-o", output,
                 "--json-summary", summaryPath, "--quiet"],
                environment: try camera.environment(), timeout: .seconds(120))
            try #require(r.status == 0, "\(r.transcript)")
            let summary = try #require(try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: summaryPath))) as? [String: Any])
            let counters = try Tools.counters(output, width: 320).map { try #require($0, "a picture without its frame code") }
            let missing = Set(0...(counters.max() ?? 0)).subtracting(counters).sorted()
            return Recording(summary: summary, counters: counters, missing: missing)
        }

        @Test func anEncoderTooSlowForTheCameraStepsFasterAndDropsNothingOnceSettled() throws {
            let dropping = try Self.record("drop", seconds: 5)
            #expect(dropping.count("dropped_queue") > 20, "placebo kept up without adapting: \(dropping.summary)")
            #expect(dropping.speed == nil)
            let dropTimes = dropping.missing.map { Double($0) / 30 }
            #expect((dropTimes.last ?? 0) > 4, "--realtime drop drops to the end: \(dropTimes)")

            let adaptive = try Self.record("adaptive")
            // x264 holds a picture for its lookahead (60 frames at placebo) before it codes
            // it: no speed can show before the first pictures come out, so settling counts
            // from then.
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
