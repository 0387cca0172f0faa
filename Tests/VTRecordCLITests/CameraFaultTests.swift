import Foundation
import Testing
import VTTestSupport

/// A camera that misbehaves while vtrecord records from it: unplugged at a frame chosen from a
/// printed seed (VTRECORD_FAULT_SEED repeats it), a stream broken with EIO, damaged frames
/// (undecodable JPEG, short buffers, the driver's error flag), timestamps that go back or jump,
/// and the delivered rate halving part-way. For each: no crash, the documented exit status,
/// the fault counted in the JSON summary, and a file that decodes to its last complete access
/// unit with the camera's frame numbers in order.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture, kept
/// apart from the other camera recordings so neither makes the other fall behind.
extension CameraRecordingTests {
    @Suite struct CameraFaultTests {
        static let defaultSeed: UInt64 = 1_867

        struct Recording {
            var result: ChildProcess.Result
            var summary: [String: Any]
            var counters: [Int]
            var report: FakeCamera.Report
            /// What breaks the promises every fault must keep.
            var findings: [String]

            func count(_ key: String) -> Int { summary[key] as? Int ?? -1 }
        }

        /// Records from `camera` at 640x480 30 fps and notes what breaks the promises every fault
        /// must keep: no crash, `status`, a whole file whose frame numbers read and are in order
        /// (in each of `streams` runs: a restarted stream numbers from 0 again), the counts in the
        /// summary, the camera given back.
        static func recording(_ camera: FakeCamera, _ arguments: [String], status: Int32 = 0,
                              streams: Int = 1) throws -> Recording {
            let out = camera.file("out.h264")
            let summaryPath = camera.file("summary.json")
            // A time limit: a recording that hangs on a fault must fail the test, not stall the run.
            let r = try ChildProcess.run([Tools.vtrecord, "--device", camera.path, "--size", "640x480", "--fps", "30",
                                          "-o", out, "--json-summary", summaryPath, "--quiet", "--speed", "ultrafast"]
                                             + arguments,
                                         environment: try camera.environment(), timeout: .seconds(60))
            var findings: [String] = []
            if r.status != status || r.timedOut { findings.append("expected exit \(status): \(r.transcript)") }
            if r.standardError.contains("Fatal error") || r.standardError.contains("x264: invalid") {
                findings.append(r.standardError)
            }
            let data = (try? Data(contentsOf: URL(fileURLWithPath: summaryPath))) ?? Data()
            let summary = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
            if summary.isEmpty { findings.append("no JSON summary") }
            let integrity = try StreamIntegrity.examine(out)
            findings += integrity.problems
            var counters: [Int] = []
            if integrity.problems.isEmpty {
                let read = try Tools.counters(out, width: 640)
                counters = read.compactMap { $0 }
                if counters.count != read.count { findings.append("unreadable frame numbers: \(read)") }
                if zip(counters, counters.dropFirst()).filter({ $0 > $1 }).count != streams - 1 {
                    findings.append("frame numbers out of order: \(counters)")
                }
                if summary["frames_encoded"] as? Int != counters.count {
                    findings.append("\(counters.count) pictures, summary: \(summary)")
                }
            }
            let report = try camera.report()
            if !report.releasedEverything { findings.append("the camera was not given back: \(report)") }
            return Recording(result: r, summary: summary, counters: counters, report: report, findings: findings)
        }

        /// `recording`, with what it found recorded as issues.
        static func record(_ camera: FakeCamera, _ arguments: [String], status: Int32 = 0, streams: Int = 1,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> Recording {
            let recording = try recording(camera, arguments, status: status, streams: streams)
            for finding in recording.findings { Issue.record("\(finding)", sourceLocation: sourceLocation) }
            return recording
        }

        /// The only error line, for runs that fail.
        static func errorLines(_ r: ChildProcess.Result) -> [Substring] {
            r.standardError.split(separator: "\n").filter { $0.hasPrefix("vtrecord: error:") }
        }

        @Test func unpluggedAtRandomFramesEndsTheFileAtTheLastFrameCaptured() throws {
            var random = SeededRandom(seed: SeededRandom.seed(from: "VTRECORD_FAULT_SEED", default: Self.defaultSeed))
            print("unplug trials: seed \(random.seed) (VTRECORD_FAULT_SEED=\(random.seed) repeats them)")
            var passed = 0
            let formats = ["nv12", "yuyv", "mjpeg"]
            for format in formats {
                let frame = random.next(in: 15...75)
                let camera = try FakeCamera(knobs: [.unplugAfter(frames: frame)])
                let recording = try Self.recording(camera, ["--format", format, "--timing", "passthrough"], status: 3)
                var findings = recording.findings
                if Self.errorLines(recording.result).count != 1 || !recording.result.standardError.contains("was unplugged") {
                    findings.append("not one line saying so: \(recording.result.standardError)")
                }
                if !recording.report.unplugged { findings.append("never unplugged: \(recording.report)") }
                if recording.summary["stop_reason"] as? String != "error" { findings.append("summary: \(recording.summary)") }
                // Every frame the camera gave is in the file, or was dropped and counted.
                let dropped = recording.count("dropped_driver") + recording.count("dropped_queue")
                if recording.counters.count + dropped != frame || recording.counters.last != recording.report.lastSequence {
                    findings.append("\(recording.counters.count) frames + \(dropped) dropped; the camera gave \(frame), "
                                    + "the last \(recording.report.lastSequence): \(recording.counters)")
                }
                if findings.isEmpty { passed += 1 }
                print("unplug trial: \(format), unplugged at frame \(frame): \(findings.isEmpty ? "passed" : "FAILED")")
                for finding in findings { Issue.record("\(format), unplugged at frame \(frame), seed \(random.seed): \(finding)") }
            }
            print("unplug trials: \(formats.count) trials, \(passed) passed (seed \(random.seed))")
        }

        @Test func aStreamBrokenWithEIOIsADeviceErrorLikeAnUnplug() throws {
            let camera = try FakeCamera(knobs: [.eioAfter(frames: 40)])
            let recording = try Self.record(camera, ["--timing", "passthrough"], status: 3)
            let errors = Self.errorLines(recording.result)
            #expect(errors.count == 1 && errors[0].contains("stopped responding"), "\(recording.result.standardError)")
            #expect(recording.report.failed && !recording.report.unplugged)
            #expect(recording.summary["stop_reason"] as? String == "error")
            #expect(recording.counters.count + recording.count("dropped_queue") == 40, "\(recording.counters)")
            #expect(recording.counters.last == 39)
        }

        @Test func withReconnectAStreamBrokenWithEIOIsStartedAgain() throws {
            let camera = try FakeCamera(knobs: [.eioAfter(frames: 30)])
            let recording = try Self.record(camera, ["--duration", "3s", "--reconnect"], streams: 2)
            #expect(recording.count("reconnects") == 1, "\(recording.summary)")
            #expect(recording.report.failed && recording.report.opens == 1, "the same descriptor: \(recording.report)")
            #expect(recording.counters.count == 90)
            // The new stream numbers its frames from 0 again, after the gap.
            let restart = try #require(recording.counters.indices.dropFirst().first {
                recording.counters[$0] < recording.counters[$0 - 1]
            }, "\(recording.counters)")
            #expect(recording.counters[restart] == 0 && recording.counters[restart - 1] == 29, "\(recording.counters)")
            #expect(recording.count("dropped_driver") > 0, "the gap is counted: \(recording.summary)")
        }

        struct Damage: CustomTestStringConvertible, Sendable {
            var knob: FakeCamera.Knob
            var format: String
            var every: Int
            var testDescription: String { "\(knob) in \(format)" }
        }

        /// Also with every other JPEG undecodable: more failed conversions than the capture
        /// pool has buffers, so one that kept its buffer would leave later frames without one.
        @Test(arguments: [
            Damage(knob: .corruptJPEGEvery(7), format: "mjpeg", every: 7),
            Damage(knob: .corruptJPEGEvery(2), format: "mjpeg", every: 2),
            Damage(knob: .shortBufferEvery(5), format: "mjpeg", every: 5),
            Damage(knob: .shortBufferEvery(5), format: "yuyv", every: 5),
            Damage(knob: .shortBufferEvery(5), format: "nv12", every: 5),
            Damage(knob: .errorFlagEvery(6), format: "nv12", every: 6),
        ])
        func damagedFramesAreSkippedAndCounted(_ damage: Damage) throws {
            let camera = try FakeCamera(knobs: [damage.knob])
            let recording = try Self.record(camera, ["--format", damage.format, "--frames", "60", "--timing", "passthrough"])
            // Capture may run a few frames past the last one written before it stops.
            let damaged = Set((0...recording.report.lastSequence).filter { ($0 + 1) % damage.every == 0 })
            #expect(recording.counters.count == 60)
            #expect(recording.count("frames_bad") == damaged.count, "\(recording.summary)")
            let last = try #require(recording.counters.last)
            #expect(recording.counters == (0...last).filter { !damaged.contains($0) }, "\(recording.counters)")
        }

        @Test(arguments: ["cfr", "passthrough"])
        func timestampsGoingBackKeepEveryFrameInItsPlace(_ timing: String) throws {
            let camera = try FakeCamera(knobs: [.timestampBackEvery(10, milliseconds: 50)])
            let recording = try Self.record(camera, ["--duration", "3s", "--timing", timing, "--speed", "medium",
                                                     "--timestamps", camera.file("times.txt")])
            // Each tenth frame is stamped before the one ahead of it; it takes the next slot
            // instead of pushing that one out and being shown twice itself.
            #expect(recording.counters == Array(0..<90), "\(recording.counters)")
            #expect(recording.count("frames_retimed") == 9, "\(recording.summary)")
            #expect(recording.count("frames_dropped_timing") == 0 && recording.count("frames_duplicated") == 0,
                    "\(recording.summary)")
            let times = try String(contentsOfFile: camera.file("times.txt"), encoding: .utf8)
                .split(separator: "\n").dropFirst().compactMap { Double($0) }
            #expect(times.count == 90 && zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
        }

        @Test func timestampsJumpingAheadAreFilledWithRepeatsOnTheGrid() throws {
            let camera = try FakeCamera(knobs: [.timestampJumpEvery(30, milliseconds: 500)])
            let recording = try Self.record(camera, ["--duration", "4s"])
            #expect(recording.counters.count == 120)
            // Two jumps in 4 s, each leaving 0.5 s (15 slots) for the frame before it to fill.
            let repeats = recording.counters.count - Set(recording.counters).count
            #expect(repeats == recording.count("frames_duplicated"), "\(recording.summary)")
            #expect((28...32).contains(repeats), "\(recording.counters)")
            for (a, b) in zip(recording.counters, recording.counters.dropFirst()) where a == b {
                #expect(a % 30 == 28, "only the frame before a jump repeats: \(recording.counters)")
            }
            #expect(recording.count("frames_dropped_timing") == 0)
        }

        @Test func aRateHalvingPartWayIsFilledWithRepeatsOnTheGrid() throws {
            let camera = try FakeCamera(knobs: [.rateChange(frame: 45, framesPerSecond: 15)])
            let recording = try Self.record(camera, ["--duration", "4s"])
            #expect(recording.counters.count == 120)
            // 1.5 s at 30 fps, then 2.5 s at 15 fps: from the last frame before the change on,
            // each frame fills two slots.
            let before = recording.counters.filter { $0 < 44 }
            #expect(before == Array(0..<44), "\(recording.counters)")
            let after = recording.counters.filter { $0 >= 44 }
            #expect(Set(after).count >= 37 && Set(after).count <= 40, "\(after)")
            for (a, b) in zip(after, after.dropFirst()) { #expect(b == a || b == a + 1, "\(after)") }
            let repeats = recording.counters.count - Set(recording.counters).count
            #expect(repeats == recording.count("frames_duplicated") && (36...39).contains(repeats), "\(recording.summary)")
            #expect(recording.count("dropped_driver") == 0, "the driver dropped nothing: \(recording.summary)")
        }
    }
}
