import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Recordings of the live test pattern stopped at twenty moments each, drawn from a seed the
/// test prints (VTRECORD_MP4_TRIAL_SEED repeats a run): by SIGKILL during MP4, Matroska and
/// MPEG-TS recordings, which must leave a file that plays to its last complete fragment,
/// cluster or packet, and by SIGINT or SIGTERM, after which an MP4 must be finalized and hold
/// every frame written.
@Suite(.serialized) struct ContainerTrialTests {
    static let defaultSeed: UInt64 = 20_261_125
    static let fragmentDuration = 0.5
    /// 320x240 at ultrafast with zerolatency: the encoder keeps no picture back, so what a kill
    /// loses is the fragment being gathered.
    static let arguments = ["--test-pattern", "--realtime", "--size", "320x240", "--fps", "30", "--duration", "30s",
                            "--speed", "ultrafast", "--tune", "zerolatency",
                            "--fragment-duration", "\(fragmentDuration)s"]

    static func environment() -> [String: String] { ProcessInfo.processInfo.environment }

    /// Starts a recording and waits until it says it is recording; nil when it never did.
    static func start(_ path: String, extra: [String] = []) throws -> (ChildProcess, ContinuousClock.Instant)? {
        // A transport stream has no fragments: each packet is written as it comes.
        let options = path.hasSuffix(".ts") ? Array(arguments.dropLast(2)) : arguments
        let child = try ChildProcess([Tools.vtrecord] + options + extra + ["-o", path], environment: environment())
        guard child.waitForStandardError(containing: "recording test-pattern to") else {
            Issue.record("vtrecord did not start: \(child.wait(timeout: .seconds(5)).transcript)")
            return nil
        }
        return (child, .now)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    @Test(arguments: ["mp4", "mkv", "ts"])
    func killedRecordingsPlayToTheirLastCompleteFragment(_ container: String) throws {
        var random = SeededRandom(seed: SeededRandom.seed(from: "VTRECORD_MP4_TRIAL_SEED", default: Self.defaultSeed))
        print("\(container) kill trials: seed \(random.seed) (VTRECORD_MP4_TRIAL_SEED=\(random.seed) repeats them)")
        let dir = try TemporaryDirectory()
        var passed = 0
        for trial in 0..<20 {
            let delay = random.next(in: 150...2500)
            let path = dir.path("kill-\(trial).\(container)")
            guard let (child, started) = try Self.start(path) else { continue }
            Thread.sleep(forTimeInterval: Double(delay) / 1000)
            child.send(SIGKILL)
            let killedAfter = Self.milliseconds(started.duration(to: .now))
            let result = child.wait(timeout: .seconds(10))
            let what = "trial \(trial + 1), SIGKILL after \(delay) ms, seed \(random.seed)"
            guard result.signal == SIGKILL else {
                Issue.record("\(what): \(result.transcript)")
                continue
            }
            var findings: [String] = []
            // What the file holds whole: MP4 says it in its fragments; for Matroska and MPEG-TS
            // the decoder's count is the measure, a last cluster or packet cut short adding none.
            let written = container == "mp4" ? Box.samplesInCompleteFragments(try Box.file(path)) : nil
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            // A Matroska file killed before its first cluster closed holds only its header,
            // which readers refuse: nothing to play, as for an MP4 without a fragment.
            let readable = try size > 0 && Tools.run("ffprobe", ["-v", "error", path]).status == 0
            let counters = readable && written != 0 ? try Tools.counters(path, width: 320) : []
            if !counters.isEmpty {
                // Every frame of the complete fragments plays, in order.
                if let written, counters.count != written {
                    findings.append("\(counters.count) frames decode, \(written) in complete fragments")
                }
                if counters.contains(where: { $0 == nil }) || zip(counters, counters.dropFirst()).contains(where: { $0! >= $1! }) {
                    findings.append("frame counters out of order: \(counters.prefix(8))…")
                }
                // The newest complete fragment ends no more than a fragment, the frame that
                // closes it and a margin for scheduling before the kill.
                let last = Double(counters.last.flatMap { $0 } ?? -1)
                let expected = (killedAfter / 1000 - Self.fragmentDuration - 0.35) * 30
                if last < expected {
                    findings.append("the file ends at frame \(Int(last)), the kill came near frame \(Int(killedAfter / 1000 * 30))")
                }
            } else if killedAfter > 1200 {
                findings.append("no complete fragment after \(Int(killedAfter)) ms")
            }
            for finding in findings { Issue.record("\(what): \(finding)") }
            if findings.isEmpty { passed += 1 }
        }
        print("\(container) kill trials: \(passed)/20 passed (seed \(random.seed))")
    }

    @Test func stoppedRecordingsAreFinalized() throws {
        var random = SeededRandom(seed: SeededRandom.seed(from: "VTRECORD_MP4_TRIAL_SEED", default: Self.defaultSeed) ^ 0x5A)
        print("MP4 stop trials: seed \(random.seed)")
        let dir = try TemporaryDirectory()
        var passed = 0
        for trial in 0..<20 {
            let delay = random.next(in: 100...2000)
            let path = dir.path("stop-\(trial).mp4")
            let summary = dir.path("stop-\(trial).json")
            guard let (child, _) = try Self.start(path, extra: ["--json-summary", summary]) else { continue }
            Thread.sleep(forTimeInterval: Double(delay) / 1000)
            child.send(random.coin() ? SIGINT : SIGTERM)
            let result = child.wait(timeout: .seconds(20))
            let what = "trial \(trial + 1), signal after \(delay) ms"
            guard result.status == 0, result.signal == nil else {
                Issue.record("\(what): \(result.transcript)")
                continue
            }
            var findings: [String] = []
            let json = try SegmentTests.json(summary)
            let frames = json["frames_encoded"] as? Int ?? -1
            if frames == 0 {
                if FileManager.default.fileExists(atPath: path) { findings.append("no frame, but a file") }
            } else {
                let top = try Box.file(path)
                if top.map(\.type) != ["ftyp", "mdat", "moov"] { findings.append("boxes \(top.map(\.type))") }
                if json["finalized"] as? Bool != true { findings.append("summary: finalized \(json["finalized"] ?? "none")") }
                if let movie = top.last, movie.type == "moov" {
                    let tables = try SampleTables(movie: movie)
                    if tables.sizes.count != frames { findings.append("moov lists \(tables.sizes.count) of \(frames) frames") }
                }
                let decoded = try Tools.frameMD5s(path).count
                if decoded != frames { findings.append("\(decoded) of \(frames) frames decode") }
            }
            for finding in findings { Issue.record("\(what): \(finding)") }
            if findings.isEmpty { passed += 1 }
        }
        print("MP4 stop trials: \(passed)/20 passed")
    }
}
