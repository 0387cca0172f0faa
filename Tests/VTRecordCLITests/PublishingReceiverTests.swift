import Foundation
import Testing
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// vtrecord publishing to receivers it did not write (`StreamReceiver`: ffmpeg's SRT, RTSP and
/// UDP receivers, nginx's RTMP module), on loopback: what each decodes are the local file's
/// pictures, from the first keyframe it got, with the sound; and the faults a stream meets
/// (a receiver killed and back, one that stops reading, a lossy link) cost the recording
/// nothing.
///
/// Each test records in real time and waits on child processes, on a thread of its own, so
/// they run side by side.
@Suite(.timeLimit(.minutes(2))) struct PublishingReceiverTests {
    static let environment = ProcessInfo.processInfo.environment

    static func summary(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
    }

    static func describe(_ parts: [ReceivedPart]) -> String {
        parts.map { "part \($0.generation): \($0.frames.count) frames, \($0.soundFrames.count) sound frames\n"
            + "\($0.standardError.suffix(2000))" }.joined(separator: "\n")
    }

    /// Whether `received` is a run of `local` from one of its pictures on (`inOrder`: a
    /// subsequence, for a receiver that may leave out a few).
    static func follows(_ received: [String], _ local: [String], inOrder: Bool = false) -> Bool {
        guard let first = received.first, let start = local.firstIndex(of: first) else { return false }
        if !inOrder { return Array(local[start...].prefix(received.count)) == received }
        var waiting = received[...]
        for hash in local[start...] where waiting.first == hash { waiting.removeFirst() }
        return waiting.isEmpty
    }

    /// vtrecord's test pattern, live, at 320x240 with the test sound, above the rest of the
    /// suite (`Tools.vtrecordAboveTheSuite`): it must drop nothing at its queue of four frames.
    /// x264 ultrafast: what these tests check is the streams, not the encoder, and with
    /// several of these recordings at once beside the other lanes, a medium encode of 111 ms
    /// once let the queue fill.
    static func recording(_ outputs: [String], in directory: TemporaryDirectory, seconds: Int = 3,
                          extra: [String] = []) -> [String] {
        Tools.vtrecordAboveTheSuite
            + ["--test-pattern", "--realtime", "drop", "--size", "320x240", "--keyint", "15", "--audio", "test",
               "--speed", "ultrafast",
               "--duration", "\(seconds)s", "--json-summary", directory.path("summary.json"), "--quiet"]
            + extra + outputs.flatMap { ["-o", $0] }
    }

    @Test(arguments: [StreamReceiver.Kind.srt(), .rtsp, .rtmp, .udp])
    func theReceiverDecodesTheRecordingsPictures(kind: StreamReceiver.Kind) async throws {
        let dir = try TemporaryDirectory()
        let (result, parts) = try await StreamPeerProofTests.offThePool {
            let receiver = try StreamReceiver(kind)
            let result = try ChildProcess.run(Self.recording([dir.path("local.mkv"), receiver.url], in: dir),
                                              environment: Self.environment, timeout: .seconds(30))
            return (result, receiver.stop())
        }
        // RTSP's receiver may leave out the B-frames after the first keyframe.
        let isRTSP = kind == .rtsp
        let part = try Self.expectOneCleanPart(result, parts, in: dir, frames: 60, missing: isRTSP ? 5 : 0, inOrder: isRTSP)
        #expect(part.hasSound, "\(Self.describe(parts))")
        if isRTSP { #expect(part.rtspTransport == .tcp, "\(Self.describe(parts))") }
    }

    /// What a recording to local.mkv and one stream must show: the run ended well, the file has
    /// at least `frames` pictures, the receiver got them in one part that decodes clean, from
    /// wherever it joined (in order, with `inOrder`: some may be left out between), missing no
    /// more than `missing` of the file's, and the stream's output dropped no packet.
    static func expectOneCleanPart(_ result: ChildProcess.Result, _ parts: [ReceivedPart], in dir: TemporaryDirectory,
                                   frames: Int, missing: Int, inOrder: Bool = false) throws -> ReceivedPart {
        #expect(result.status == 0, "\(result.transcript)")
        let (local, _) = try FrameChecksums.decoding(dir.path("local.mkv"))
        #expect(local.video.count >= frames)
        let part = try #require(parts.count == 1 ? parts.first : nil, "\(describe(parts))")
        #expect(part.decodingErrors.isEmpty, "\(part.decodingErrors)")
        #expect(follows(part.hashes, local.hashes, inOrder: inOrder), "\(describe(parts))")
        #expect(part.frames.count >= local.video.count - missing, "\(describe(parts))")
        let outputs = try summary(dir.path("summary.json"))["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.last?["packets_dropped"] as? Int == 0, "\(outputs)")
        // Every picture and sound frame of the file went out to the stream: what a receiver
        // lacks was lost after vtrecord sent it.
        #expect(outputs.count == 2 && outputs.last?["packets_written"] as? Int == local.video.count + local.audio.count,
                "\(local.video.count) pictures and \(local.audio.count) sound frames in the file: \(outputs)")
        return part
    }

    /// An H.264 camera's own access units (--encoder copy) to a file and an SRT stream at once:
    /// the receiver decodes the file's pictures from a keyframe on, without an error. The
    /// recording runs above the suite: a unit dropped at its queue would leave out what follows
    /// it up to the next IDR picture, a second later.
    @Test func anH264CamerasStreamStoredAsItCameIsPublishedToo() async throws {
        let dir = try TemporaryDirectory()
        let camera = try FakeCamera(knobs: [.formats("H264:320x240@30")])
        let environment = try camera.environment()
        let (result, parts) = try await StreamPeerProofTests.offThePool {
            let receiver = try StreamReceiver(.srt())
            let result = try ChildProcess.run(
                Tools.vtrecordAboveTheSuite
                + ["--device", camera.path, "--encoder", "copy", "--format", "h264", "--size", "320x240",
                   "--keyint", "1s", "--duration", "3s", "--quiet", "--json-summary", dir.path("summary.json"),
                   "-o", dir.path("local.mkv"), "-o", receiver.url],
                environment: environment, timeout: .seconds(30))
            return (result, receiver.stop())
        }
        // The receiver joins at the camera's next IDR picture, up to a second in.
        _ = try Self.expectOneCleanPart(result, parts, in: dir, frames: 85, missing: 30)
    }

    /// The receiver dies once the stream flows and is back 5 s later: the stream reconnects
    /// and the receiver's second part starts with a keyframe, asked of the encoder (at once
    /// with zerolatency, whose encoder holds no picture back), and decodes clean; the local
    /// file has every frame. The recording is stopped 3 s after the second part began, not at
    /// a fixed length: the retries back off (1, 2, 4, 8 s), so on a busy machine a receiver
    /// that came back a little late is reached 8 s later, which a fixed length of 14 s once
    /// left no time for.
    @Test(arguments: [StreamReceiver.Kind.rtmp, .srt()])
    func aReceiverKilledAndBackGetsAKeyframeAtOnce(kind: StreamReceiver.Kind) async throws {
        let dir = try TemporaryDirectory()
        let (result, cameBack, parts) = try await StreamPeerProofTests.offThePool {
            let receiver = try StreamReceiver(kind)
            let child = try ChildProcess(Self.recording([dir.path("local.mkv"), receiver.url], in: dir, seconds: 60,
                                                        extra: ["--tune", "zerolatency"]),
                                         environment: Self.environment)
            receiver.waitUntilReceived(bytes: 20_000)
            receiver.kill()
            Thread.sleep(forTimeInterval: 5)
            try receiver.restart()
            let cameBack = receiver.waitUntilReceived(bytes: 2_000, timeout: .seconds(40))
            Thread.sleep(forTimeInterval: 3)
            child.send(SIGINT)
            return (child.wait(timeout: .seconds(20)), cameBack, receiver.stop())
        }
        #expect(cameBack, "the second receiver got nothing within 40 s: \(result.standardError)")
        #expect(result.status == 0, "\(result.transcript)")
        let summary = try Self.summary(dir.path("summary.json"))
        #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
        let (local, _) = try FrameChecksums.decoding(dir.path("local.mkv"))
        #expect(local.video.count == summary["frames_encoded"] as? Int)
        try #require(parts.count == 2, "\(result.standardError) \(Self.describe(parts))")
        #expect(parts[1].decodingErrors.isEmpty, "\(parts[1].decodingErrors)")
        #expect(Self.follows(parts[1].hashes, local.hashes), "\(Self.describe(parts))")
        #expect(parts[1].frames.count >= 60, "\(Self.describe(parts))")
        #expect(parts[1].hasSound, "\(Self.describe(parts))")
        let output = try #require((summary["outputs"] as? [[String: Any]])?.last)
        #expect(output["reconnects"] as? Int == 1, "\(output)")
        #expect((output["keyframes_requested"] as? Int ?? 0) >= 1, "\(output)")
        #expect((output["keyframe_wait_max"] as? Double ?? 9) <= 1.0, "\(output)")
        // TCP hears of the death at once; SRT only after its peer has been silent for 5 s.
        #expect((output["seconds_down"] as? Double ?? 0) >= 1, "\(output)")
        #expect(output["state"] as? String == "finished", "\(output)")
    }

    /// An RTMP server that stops reading (nginx stopped with SIGSTOP) while a stream of 8 Mbit/s
    /// goes to it (CBR: x264 fills a small picture up to the rate, so the sockets fill as fast
    /// as at 1080p while the encoder costs next to nothing): that output's queue stays under
    /// its bound and counts what it drops, the recording (above the suite) drops nothing, and a
    /// stop ends the run within a second with the recording finalized.
    @Test func aReceiverThatStopsReadingCostsTheRecordingNothing() async throws {
        let dir = try TemporaryDirectory()
        let (result, took, peakGrowth, parts) = try await StreamPeerProofTests.offThePool {
            let receiver = try StreamReceiver(.rtmp)
            let child = try ChildProcess(
                Tools.vtrecordAboveTheSuite
                + ["--test-pattern", "--realtime", "drop", "--size", "320x240", "--speed", "ultrafast",
                   "--tune", "zerolatency", "--rate-control", "cbr", "--bitrate", "8M", "--keyint", "30",
                   "-o", dir.path("local.mp4"),
                   "-o", receiver.url, "--json-summary", dir.path("summary.json"), "--quiet"],
                environment: Self.environment)
            receiver.waitUntilReceived(bytes: 200_000)
            let settled = Self.residentKilobytes(child.processIdentifier)
            receiver.pause()
            var peak = settled
            for _ in 0..<50 {
                Thread.sleep(forTimeInterval: 0.2)
                peak = max(peak, Self.residentKilobytes(child.processIdentifier))
            }
            let stopped = ContinuousClock.now
            child.send(SIGINT)
            let result = child.wait(timeout: .seconds(20))
            let took = stopped.duration(to: .now)
            receiver.resume()
            return (result, took, peak - settled, receiver.stop())
        }
        #expect(result.status == 0, "\(result.transcript)")
        #expect(took < .seconds(1), "the run took \(took) to end after SIGINT")
        let summary = try Self.summary(dir.path("summary.json"))
        #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
        #expect(summary["finalized"] as? Bool == true, "\(summary)")
        let output = try #require((summary["outputs"] as? [[String: Any]])?.last)
        let limit = output["queue_limit_bytes"] as? Int ?? 0
        #expect((output["queue_peak_bytes"] as? Int ?? Int.max) <= limit, "\(output)")
        #expect((output["packets_dropped"] as? Int ?? 0) > 0 && (output["gops_dropped"] as? Int ?? 0) > 0, "\(output)")
        #expect(summary["outputs_kept_up"] as? Bool == false)
        // The process grew by no more than the queue's bound (and some room for the allocator).
        #expect(peakGrowth < limit / 1024 + 16_000, "grew by \(peakGrowth) kB while the receiver read nothing")
        #expect(!parts.isEmpty, "\(Self.describe(parts))")
    }

    /// SRT through a relay that loses 5 % of the datagrams each way and delays the rest by
    /// 100 ms: at `latency=800`, four round trips as SRT's guidance asks of a lossy link, the
    /// received stream decodes without an error. (At 500, two rounds of retransmission, a
    /// repaired packet came 2 ms after its time in one full run of the suite.)
    @Test func srtAtLatency800ThroughALossyLinkDecodesClean() async throws {
        let dir = try TemporaryDirectory()
        let (result, parts, counts) = try await StreamPeerProofTests.offThePool {
            let receiver = try StreamReceiver(.srt(latencyMilliseconds: 800))
            let relay = try LossyRelay(to: receiver.port, loss: 0.05, delay: .milliseconds(100), seed: 11)
            let result = try ChildProcess.run(
                Self.recording([dir.path("local.mkv"), "srt://127.0.0.1:\(relay.port)?latency=800"], in: dir),
                environment: Self.environment, timeout: .seconds(30))
            let parts = receiver.stop()
            return (result, parts, try relay.stop())
        }
        #expect(result.status == 0, "\(result.transcript)")
        #expect(counts.forward.dropped > 0, "\(counts)")
        let (local, _) = try FrameChecksums.decoding(dir.path("local.mkv"))
        let part = try #require(parts.count == 1 ? parts.first : nil, "\(Self.describe(parts))")
        #expect(part.decodingErrors.isEmpty, "\(counts): \(part.decodingErrors)")
        #expect(Self.follows(part.hashes, local.hashes), "\(counts): \(Self.describe(parts))")
        #expect(part.frames.count == local.video.count, "\(counts): \(Self.describe(parts))")
    }

    /// vtrecord as the SRT listener (`mode=listener`): it waits for its receiver as long as it
    /// takes, and a receiver calling in a second late starts at a keyframe.
    @Test func anSRTListenerWaitsForItsCaller() async throws {
        let dir = try TemporaryDirectory()
        let port = StreamReceiver.freeLoopbackPort(udp: true)
        let (result, caller) = try await StreamPeerProofTests.offThePool {
            let child = try ChildProcess(Self.recording([dir.path("local.mkv"), "srt://127.0.0.1:\(port)?mode=listener"],
                                                        in: dir, seconds: 5),
                                         environment: Self.environment)
            Thread.sleep(forTimeInterval: 1.5)
            let caller = try ChildProcess(["ffmpeg", "-nostdin", "-v", "error", "-i", "srt://127.0.0.1:\(port)",
                                           "-map", "0:v", "-fps_mode", "passthrough", "-f", "framemd5",
                                           dir.path("received.md5")],
                                          environment: Self.environment, signalsUnblocked: true)
            let result = child.wait(timeout: .seconds(30))
            return (result, caller.wait(timeout: .seconds(15)))
        }
        #expect(result.status == 0, "\(result.transcript)")
        #expect(!caller.timedOut, "\(caller.transcript)")
        let received = FrameChecksums(parsing: (try? String(contentsOfFile: dir.path("received.md5"), encoding: .utf8)) ?? "")
        let (local, _) = try FrameChecksums.decoding(dir.path("local.mkv"))
        #expect(received.video.count >= 60, "\(received.video.count) pictures: \(caller.transcript)")
        #expect(Self.follows(received.video.map(\.hash), local.hashes), "\(caller.transcript)")
    }

    static func residentKilobytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
