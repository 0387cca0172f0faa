import Foundation
import Testing
import VTCapture

/// The test pattern carries its frame number; decoding a recording and reading the numbers
/// back shows order, gaps and duplicates.
@Suite struct TestPatternRecordingTests {
    @Test func threeHundredFramesInOrder() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("pattern.h264")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "1280x720", "--frames", "300",
                                    "--speed", "veryfast", "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        let numbers = try Tools.counters(out, width: 1280)
        #expect(numbers.count == 300)
        #expect(numbers == (0..<300).map { Optional($0) })
    }

    @Test func durationCountsPresentationTime() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("two-seconds.h264")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--fps", "25", "--duration", "2s",
                                    "--bframes", "2", "-o", out, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Tools.counters(out, width: 320) == (0..<50).map { Optional($0) })
        let probe = try Tools.ffprobe(out, ["-show_entries", "stream=r_frame_rate"])
        let stream = (probe["streams"] as? [[String: Any]])?.first
        #expect(stream?["r_frame_rate"] as? String == "25/1")
    }

    @Test func firstSignalStopsCleanlyAndKeepsEveryFrame() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("interrupted.h264")
        let summary = dir.path("summary.json")
        // A paced pattern (like a camera) interrupted once it has written its first frames (the
        // encoder's lookahead holds more than ten), however long the process took to start;
        // stopped for 1.5 s before, as a loaded machine can keep it off the CPU: 45 frames come
        // due meanwhile, more than the pattern has buffers for (26 with --realtime adaptive's
        // queue of 24).
        let r = try Tools.shell("""
            "$VTRECORD" --test-pattern --realtime --size 320x240 --fps 30 -o '\(out)' --json-summary '\(summary)' &
            pid=$!; for i in $(seq 200); do [ -s '\(out)' ] && break; sleep 0.05; done
            kill -STOP $pid; sleep 1.5; kill -CONT $pid
            sleep 0.2; kill -INT $pid; wait $pid; echo "status=$?" >&2
            """)
        #expect(r.stderr.contains("status=0"), "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any])
        #expect(json["stop_reason"] as? String == "signal")
        let encoded = try #require(json["frames_encoded"] as? Int)
        #expect(encoded > 10)
        let numbers = try Tools.counters(out, width: 320)
        #expect(numbers.count == encoded)
        #expect(numbers.allSatisfy { $0 != nil })
        // Paced like a camera: of the frames whose time came while the capture thread was kept
        // off the CPU, those beyond the buffers free are dropped by the source, and the place
        // of each on the constant-rate grid repeats the picture before it; so does a frame of
        // the burst that follows which finds the queue full. Each picture is therefore the one
        // of its own place or a repeat of the one before, and the summary counts every repeat,
        // each for a frame the source or the queue dropped.
        let kept = numbers.compactMap { $0 }
        #expect(kept.indices.allSatisfy { kept[$0] == $0 || ($0 > 0 && kept[$0] == kept[$0 - 1]) }, "\(kept)")
        let repeats = zip(kept, kept.dropFirst()).filter { $0 == $1 }.count
        let duplicated = json["frames_duplicated"] as? Int
        let dropped = (json["dropped_driver"] as? Int ?? 0) + (json["dropped_queue"] as? Int ?? 0)
        #expect(duplicated == repeats && repeats <= dropped && repeats > 0, "\(kept): \(json)")
    }

    @Test func secondSignalAbortsAtOnceLeavingWholeAccessUnits() throws {
        let dir = try TemporaryDirectory()
        let out = dir.path("aborted.h264")
        // 1080p at the default speed: x264's lookahead holds dozens of frames, so after the
        // first signal the flush takes seconds and the second signal lands in it.
        let r = try Tools.shell("""
            "$VTRECORD" --test-pattern --size 1920x1080 -o '\(out)' &
            pid=$!
            for i in $(seq 600); do [ -s '\(out)' ] && break; sleep 0.1; done
            kill -INT $pid; sleep 0.3; kill -INT $pid; wait $pid; echo "status=$?" >&2
            """)
        #expect(r.stderr.contains("status=130"), "\(r.stderr)")
        let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "the aborted file does not decode cleanly: \(decode.stderr)")
        let numbers = try Tools.counters(out, width: 1920)
        #expect(!numbers.isEmpty)
        // A prefix in decode order: every picture readable and in display order, but with
        // B-frames the last reference may arrive before the B-frames shown ahead of it.
        let readable = numbers.compactMap { $0 }
        #expect(readable.count == numbers.count)
        #expect(zip(readable, readable.dropFirst()).allSatisfy { $0 < $1 })
    }
}
