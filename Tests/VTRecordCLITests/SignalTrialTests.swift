import Foundation
import Testing
import VTTestSupport

/// SIGINT and SIGTERM at twenty moments of a camera recording, chosen from a seed the test
/// prints (VTRECORD_SIGNAL_SEED repeats a run): while vtrecord opens the camera, negotiates its
/// format and rate, asks for buffers, starts the stream, streams, and drains the encoder. The
/// fake camera pauses in the chosen phase and says so, so each signal lands in its phase on
/// purpose rather than by luck of timing.
///
/// Each trial: exit 0 after one signal, 130 after a second; a recording that had frames decodes
/// to its last complete access unit, with the camera's frame numbers in order and none twice;
/// no file when the signal came before the first frame; the camera given back (its exit report
/// shows no descriptor, mapping or queued buffer). After a second signal the process leaves with
/// _exit: the report then shows what it still held at that moment, for the kernel to release,
/// and the trial checks that this is at most the one stream it had.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers it: real-time capture, kept
/// apart from the other camera recordings so neither makes the other fall behind.
extension CameraRecordingTests {
    @Suite struct SignalTrialTests {
        static let defaultSeed: UInt64 = 20_240_611

        enum Phase: String, CaseIterable, Sendable {
            case open, formatNegotiation = "s_fmt", rateNegotiation = "s_parm", buffers = "reqbufs"
            case streamOn = "streamon", streaming, drain

            var label: String {
                switch self {
                case .open: "open"
                case .formatNegotiation: "format negotiation (S_FMT)"
                case .rateNegotiation: "rate negotiation (S_PARM)"
                case .buffers: "buffer setup (REQBUFS)"
                case .streamOn: "stream start (STREAMON)"
                case .streaming: "streaming"
                case .drain: "drain"
                }
            }

            /// The signal comes before the first frame can be written: no file is left.
            var beforeFirstFrame: Bool { self != .streaming && self != .drain }
            /// How many of the twenty moments fall in this phase.
            var moments: Int {
                switch self {
                case .open, .formatNegotiation, .streamOn, .drain: 3
                case .rateNegotiation, .buffers: 2
                case .streaming: 4
                }
            }
        }

        struct Trial: CustomStringConvertible {
            var phase: Phase
            /// One signal, or two: the second after vtrecord has said it is finishing.
            var signals: [Int32]
            /// Streaming and drain: the pause comes in the DQBUF after this many frames.
            var frame: Int
            /// What the camera sends: nv12 reaches the encoder without a copy (the driver's buffers
            /// are leased), yuyv and mjpeg are converted.
            var format: String

            var pauseAt: String { phase.beforeFirstFrame ? phase.rawValue : "dqbuf:\(frame)" }
            var description: String {
                "\(phase.label)\(phase.beforeFirstFrame ? "" : " at \(pauseAt)"), \(format), "
                    + signals.map(SignalTrialTests.name).joined(separator: " then ")
            }
        }

        static func name(_ signal: Int32) -> String { signal == SIGINT ? "SIGINT" : "SIGTERM" }

        /// Every phase gets its share of the moments, one of them with a second signal; the seed
        /// picks which one, the signals, the frame of each DQBUF pause, the format, and the order.
        static func trials(_ random: inout SeededRandom) -> [Trial] {
            var trials: [Trial] = []
            for phase in Phase.allCases {
                let double = random.next(in: 0...(phase.moments - 1))
                for moment in 0..<phase.moments {
                    let count = moment == double ? 2 : 1
                    let signals = (0..<count).map { _ in random.coin() ? SIGINT : SIGTERM }
                    let frame = phase == .drain ? random.next(in: 45...65) : random.next(in: 5...40)
                    let format = ["nv12", "yuyv", "mjpeg"][random.next(in: 0...2)]
                    trials.append(Trial(phase: phase, signals: signals, frame: frame, format: format))
                }
            }
            random.shuffle(&trials)
            return trials
        }

        @Test func signalsAtTwentyMomentsLeaveWholeFilesAndAFreeCamera() throws {
            var random = SeededRandom(seed: SeededRandom.seed(from: "VTRECORD_SIGNAL_SEED", default: Self.defaultSeed))
            print("signal trials: seed \(random.seed) (VTRECORD_SIGNAL_SEED=\(random.seed) repeats them)")
            let trials = Self.trials(&random)
            #expect(trials.count == 20)
            var passed = 0
            for (index, trial) in trials.enumerated() {
                let started = ContinuousClock.now
                var findings: [String]
                do {
                    findings = try Self.run(trial)
                } catch {
                    findings = ["\(error)"]
                }
                let elapsed = started.duration(to: .now)
                print("signal trial \(index + 1)/\(trials.count): \(trial): " + (findings.isEmpty ? "passed" : "FAILED")
                      + String(format: " (%.1f s)", Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)))
                if findings.isEmpty { passed += 1 }
                for finding in findings { Issue.record("trial \(index + 1) (\(trial)), seed \(random.seed): \(finding)") }
            }
            print("signal trials: \(trials.count) trials, \(passed) passed (seed \(random.seed))")
        }

        /// How long the camera stays paused in the trial's phase: 1 s, or VTRECORD_SIGNAL_PAUSE_MS
        /// (make test-sanitize gives sanitized processes, which take longer to exit, more).
        static let pauseMilliseconds = ProcessInfo.processInfo.environment["VTRECORD_SIGNAL_PAUSE_MS"]
            .flatMap { Int($0) }.map { max($0, 1000) } ?? 1000

        /// Runs one trial; what went wrong, or nothing.
        static func run(_ trial: Trial) throws -> [String] {
            var findings: [String] = []
            func check(_ condition: Bool, _ finding: @autoclosure () -> String) {
                if !condition { findings.append(finding()) }
            }
            var knobs: [FakeCamera.Knob] = [.pause(at: trial.pauseAt, milliseconds: pauseMilliseconds),
                                            .formats("NV12:640x480@30;YUYV:640x480@30;MJPG:640x480@30")]
            // The drain trials need frames the encoder still holds, a lookahead, and pictures that
            // cost it time, so the drain lasts long enough (about a second) for a second signal to
            // land in it; one encoder thread, so the rest of the machine is not starved meanwhile,
            // and the speed held (--realtime drop), so the encoder does not step out of being slow.
            if trial.phase == .drain { knobs.append(.noise(amplitude: 12)) }
            let camera = try FakeCamera(knobs: knobs)
            let out = camera.file("out.h264")
            let summaryPath = camera.file("summary.json")
            let speed = trial.phase == .drain
                ? ["--speed", "medium", "--threads", "1", "--realtime", "drop"] : ["--speed", "ultrafast", "--tune", "zerolatency"]
            let child = try ChildProcess(
                [Tools.vtrecord, "--device", camera.path, "--format", trial.format, "--size", "640x480", "--fps", "30",
                 "--timing", "passthrough", "-o", out, "--json-summary", summaryPath] + speed,
                environment: try camera.environment())

            guard child.waitForStandardError(containing: "fake-v4l2: paused at \(trial.pauseAt) ", timeout: .seconds(30)) else {
                return ["the camera never paused at \(trial.pauseAt): \(child.wait(timeout: .seconds(10)).transcript)"]
            }
            // Frames the encoder has given out, against the frames it was handed.
            let writtenAtSignal = trial.phase == .drain
                ? (try? Data(contentsOf: URL(fileURLWithPath: out))).map { StreamIntegrity.parse([UInt8]($0), name: out).pictures }
                : nil
            child.send(trial.signals[0])
            let notice = "\(name(trial.signals[0])): finishing the recording"
            if !child.waitForStandardError(containing: notice, timeout: .seconds(10)) {
                findings.append("no notice for the first signal")
            }
            if trial.signals.count == 2 {
                if trial.phase == .drain {
                    // Capture ends as soon as the camera hands out the frame it paused on, and the
                    // camera is given back; the encoder is then draining what it holds (about a
                    // second). The second signal goes once the camera says it was given back:
                    // on a loaded machine that took more than the 0.3 s once waited here.
                    check(child.waitForStandardError(containing: "fake-v4l2: released the camera", timeout: .seconds(10)),
                          "the camera was never given back after the first signal")
                }
                child.send(trial.signals[1])
            }
            let result = child.wait(timeout: .seconds(60))
            let stderr = result.standardError
            let aborted = trial.signals.count == 2
            check(!result.timedOut, "timed out")
            check(result.status == (aborted ? 130 : 0), "exit \(result.status), expected \(aborted ? 130 : 0): \(stderr.suffix(1500))")
            check(!stderr.contains("Fatal error") && !stderr.contains("vtrecord: error"), "an error: \(stderr.suffix(1500))")
            // The first signal was taken while the camera was still paused in the phase.
            if let taken = stderr.range(of: notice) {
                let resumed = stderr.range(of: "fake-v4l2: resumed after")
                check(resumed.map { taken.lowerBound < $0.lowerBound } ?? true, "the signal was taken only after the pause")
                if aborted && trial.phase != .drain { check(resumed == nil, "the second signal did not abort during the pause") }
            }

            let report = try camera.report()
            check(report.pauseReached == (trial.phase.beforeFirstFrame ? trial.phase.rawValue : "dqbuf"), "report: \(report)")
            if !aborted || trial.phase == .drain {
                // A clean stop gives the camera back; so does a drain, which starts once capture has ended.
                check(report.exitPath == (aborted ? "_exit" : "exit"), "report: \(report)")
                check(report.releasedEverything, "the camera was not given back: \(report)")
            } else {
                // Aborted inside the paused call: at most the one stream, which the kernel releases.
                check(report.exitPath == "_exit", "report: \(report)")
                check(report.openHandles <= (trial.phase == .open ? 0 : 1), "descriptors left: \(report)")
                check(report.mappedBuffers <= 8 && report.buffersQueued <= 8, "buffers left: \(report)")
            }

            let exists = FileManager.default.fileExists(atPath: out)
            if trial.phase.beforeFirstFrame {
                check(!exists, "a signal before the first frame left \(out)")
            } else if !exists {
                findings.append("no output file")
            } else {
                findings += try recordingFindings(trial, out: out, report: report, aborted: aborted,
                                                  writtenAtSignal: writtenAtSignal)
            }
            if !aborted {
                let data = (try? Data(contentsOf: URL(fileURLWithPath: summaryPath))) ?? Data()
                let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
                check(json["stop_reason"] as? String == "signal", "summary: \(json)")
                if trial.phase.beforeFirstFrame {
                    check(json["frames_encoded"] as? Int == 0 && (json["segments"] as? [String])?.isEmpty == true,
                          "summary: \(json)")
                } else {
                    let counters = try Tools.counters(out, width: 640)
                    let dropped = json["dropped_queue"] as? Int ?? -1
                    check(json["frames_encoded"] as? Int == counters.count, "summary \(json) vs \(counters.count) pictures")
                    check(counters.count + dropped == report.framesDelivered,
                          "\(counters.count) written + \(dropped) dropped at the queue ≠ \(report.framesDelivered) delivered")
                }
            }
            return findings
        }

        /// The file of a trial that reached streaming.
        static func recordingFindings(_ trial: Trial, out: String, report: FakeCamera.Report, aborted: Bool,
                                      writtenAtSignal: Int?) throws -> [String] {
            var findings = try StreamIntegrity.examine(out).problems
            guard findings.isEmpty else { return findings }
            let counters = try Tools.counters(out, width: 640)
            let numbers = counters.compactMap { $0 }
            if numbers.count != counters.count { findings.append("unreadable frame numbers: \(counters)") }
            if zip(numbers, numbers.dropFirst()).contains(where: { $0 >= $1 }) {
                findings.append("frame numbers out of order or repeated: \(numbers)")
            }
            if let last = numbers.last, last > report.lastSequence {
                findings.append("frame \(last) was never handed out (last \(report.lastSequence))")
            }
            if !aborted && numbers.last != report.lastSequence {
                findings.append("the file ends at \(numbers.last ?? -1), the camera's last frame was \(report.lastSequence)")
            }
            if trial.phase == .streaming && aborted && numbers.count > trial.frame {
                findings.append("\(numbers.count) frames, but only \(trial.frame) were handed out before the abort")
            }
            if trial.phase == .drain {
                if let writtenAtSignal, writtenAtSignal + 10 > trial.frame {
                    findings.append("the encoder held fewer than 10 frames at the signal (\(writtenAtSignal) of \(trial.frame) written)")
                }
                if aborted && numbers.count >= report.framesDelivered {
                    findings.append("the second signal came after the drain: \(numbers.count) of \(report.framesDelivered) written")
                }
            }
            return findings
        }
    }
}
