import Foundation
import Testing
import VTTestSupport

/// An encoder slower than the camera, with `--realtime drop` (it keeps its speed), for the
/// `--buffers` values that matter (every one vtrecord accepts in `make test-long`) and every
/// pixel format: the camera is never made to wait,
/// so its driver drops nothing; the frames the encoder cannot take are dropped at the queue and
/// counted; every frame captured is written, counted as dropped, or was still held when the
/// recording reached its limit; and the capture thread never takes longer than a frame
/// interval to pass a frame on.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture.
extension CameraRecordingTests {
    @Suite struct SlowEncoderTests {
        /// What `--buffers` accepts (CommandLineTests checks the edges are refused).
        static let acceptedBuffers = 3...32

        /// The buffer counts tried: every one accepted in `make test-long`; in `make test` the
        /// edges, each side of where frames stop being leased without a copy sooner (3, 4, 5:
        /// `V4L2Source.leaseFloor`), the default (8) and one between: a sweep of all thirty
        /// takes two and a half minutes.
        static var triedBuffers: [Int] {
            ProcessInfo.processInfo.environment["VTRECORD_LONG"] == "1" ? Array(acceptedBuffers) : [3, 4, 5, 8, 16, 32]
        }

        /// What one recording's summary must show. `held`: frames the pipeline may hold at a
        /// limit (the queue, the frame being handed over, the one in the encoder, the grid's).
        static func findings(_ summary: [String: Any], frameInterval milliseconds: Double,
                             held: Int = 7) -> [String] {
            func count(_ key: String) -> Int { summary[key] as? Int ?? -1 }
            var findings: [String] = []
            if count("dropped_driver") != 0 { findings.append("the driver dropped \(count("dropped_driver")) frames") }
            if count("dropped_queue") <= 0 { findings.append("the encoder kept up: nothing was dropped at the queue") }
            let pictures = count("frames_encoded") - count("frames_duplicated")
            let unaccounted = count("frames_captured") - pictures - count("dropped_queue") - count("frames_dropped_timing")
            if !(0...held).contains(unaccounted) {
                findings.append("\(unaccounted) frames captured are neither written nor counted as dropped")
            }
            let handoff = summary["capture_handoff_ms_max"] as? Double ?? .infinity
            if handoff >= milliseconds {
                findings.append("the capture thread took \(handoff) ms to pass a frame on (a frame lasts \(milliseconds) ms)")
            }
            return findings
        }

        static func summary(_ path: String) -> [String: Any] {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        }

        /// A hardware encoder that takes 40 ms a picture behind a 60 fps camera.
        @Test(arguments: ["nv12", "yuyv", "mjpeg"])
        func aSlowHardwareEncoderDropsOnlyAtTheQueueWithEveryBufferCount(_ format: String) throws {
            let camera = try FakeCamera(knobs: [.formats("YUYV:320x240@60;NV12:320x240@60;MJPG:320x240@60")])
            let va = try FakeVADevice(knobs: [.syncMilliseconds(40)])
            let environment = try va.environment(base: try camera.environment())
            for buffers in Self.triedBuffers {
                let summaryPath = camera.file("summary-\(buffers).json")
                let r = try ChildProcess.run(
                    [Tools.vtrecord, "--device", camera.path, "--format", format, "--size", "320x240", "--fps", "60",
                     "--buffers", "\(buffers)", "--realtime", "drop", "--encoder", "vaapi", "--va-device", va.devicePath,
                     "--duration", "0.6s", "-o", "/dev/null", "--json-summary", summaryPath, "--quiet"],
                    environment: environment, timeout: .seconds(60))
                #expect(r.status == 0, "--buffers \(buffers): \(r.transcript)")
                let summary = Self.summary(summaryPath)
                for finding in Self.findings(summary, frameInterval: 1000.0 / 60) {
                    Issue.record("--buffers \(buffers): \(finding): \(summary)")
                }
            }
            let reports = try camera.reports()
            #expect(reports.count == Self.triedBuffers.count && reports.allSatisfy(\.releasedEverything))
        }

        /// x264 at its slowest on 1080p30 (without lookahead, which would take a few seconds of
        /// frames in before falling behind), with the fewest buffers and the default. On one
        /// thread: with both processors busy, this virtual machine's host stops it for about
        /// 100 ms now and then, as long as three buffers last (docs/testing.md).
        @Test(arguments: ["nv12", "yuyv", "mjpeg"])
        func x264VeryslowAt1080pDropsOnlyAtTheQueue(_ format: String) throws {
            // Pictures made once, so the camera's own work does not compete with the encoder.
            let camera = try FakeCamera(knobs: [.pictureRing(10)])
            for buffers in [Self.acceptedBuffers.lowerBound, 8] {
                let summaryPath = camera.file("summary-\(buffers).json")
                let r = try ChildProcess.run(
                    [Tools.vtrecord, "--device", camera.path, "--format", format, "--size", "1920x1080", "--fps", "30",
                     "--buffers", "\(buffers)", "--realtime", "drop", "--speed", "veryslow", "--tune", "zerolatency",
                     "--threads", "1", "--timing", "passthrough", "--duration", "2s",
                     "-o", "/dev/null", "--json-summary", summaryPath, "--quiet"],
                    environment: try camera.environment(), timeout: .seconds(120))
                #expect(r.status == 0, "--buffers \(buffers): \(r.transcript)")
                let summary = Self.summary(summaryPath)
                for finding in Self.findings(summary, frameInterval: 1000.0 / 30) {
                    Issue.record("--buffers \(buffers): \(finding): \(summary)")
                }
                // The summary says where the encoder thread's time went: in the encoder, not
                // in writing to /dev/null.
                let encode = summary["encode_ms_max"] as? Double ?? 0
                let write = summary["write_ms_max"] as? Double ?? .infinity
                #expect(encode > 1000.0 / 30 && write < encode, "--buffers \(buffers): \(summary)")
            }
        }
    }
}

extension CameraRecordingTests {
    /// A live capture thread runs above the encoder's priority where the system allows it
    /// (these tests run as root, which does): an encoder using every core cannot keep it off
    /// the CPU while a driver buffer waits.
    @Suite struct CaptureThreadPriorityTests {
        @Test func theCaptureThreadOfACameraRunsAboveTheEncoder() throws {
            try #require(getuid() == 0, "raising a thread's priority needs root or CAP_SYS_NICE")
            let camera = try FakeCamera(knobs: [])
            let child = try ChildProcess(
                [Tools.vtrecord, "--device", camera.path, "--size", "320x240", "--fps", "30",
                 "--duration", "3s", "-o", "/dev/null", "--quiet"],
                environment: try camera.environment())
            // Each thread's nice value, until one runs above the main (encoder) thread.
            let pid = child.processIdentifier
            var nice: [Int32: Int] = [:]
            let deadline = ContinuousClock.now + .seconds(3)
            repeat {
                usleep(50_000)
                nice = Self.threadNiceValues(of: pid)
            } while child.isRunning && !nice.values.contains { $0 < nice[pid] ?? 0 } && ContinuousClock.now < deadline
            let result = child.wait()
            #expect(result.status == 0, "\(result.transcript)")
            let main = try #require(nice[pid], "no main thread among \(nice)")
            #expect(nice.values.contains(main - 10), "thread nice values \(nice), the encoder thread's \(main)")
            // The encoder's own threads (x264's) stay at the encoder's priority.
            #expect(nice.values.filter { $0 == main }.count >= 2, "thread nice values \(nice)")
        }

        /// tid → nice of each thread of `pid`.
        static func threadNiceValues(of pid: Int32) -> [Int32: Int] {
            threads(of: pid).mapValues(\.nice)
        }

        /// tid → name and nice of each thread of `pid`, from /proc/PID/task/TID/stat (the name
        /// in parentheses, nice in field 19).
        static func threads(of pid: Int32) -> [Int32: (name: String, nice: Int)] {
            let tasks = "/proc/\(pid)/task"
            var values: [Int32: (name: String, nice: Int)] = [:]
            for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
                guard let id = Int32(tid),
                      let stat = try? String(contentsOfFile: "\(tasks)/\(tid)/stat", encoding: .utf8),
                      let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                // Fields after the name start at 3 (state); nice is field 19.
                if fields.count > 16, let value = Int(fields[16]) {
                    values[id] = (String(stat[stat.index(after: open)..<close]), value)
                }
            }
            return values
        }
    }
}
