import Foundation
import Testing
import VTTestSupport

/// Several outputs from a live camera: publishing must never cost the recording a frame.
///
/// Nested in CameraRecordingTests, whose `.serialized` covers them: real-time capture. Runs
/// with both cores to itself (TEST_ALONE in the Makefile), as the other 1080p30 recordings do.
extension CameraRecordingTests {
    @Suite struct PublishingCameraTests {
        /// A file and three streams (SRT, RTSP, UDP, each to a receiver on loopback) at 1080p30
        /// from the camera's MJPEG: the recording drops nothing, and every stream is received.
        @Test func aFileAndThreeStreamsFromA1080pCameraDropNothing() throws {
            let camera = try FakeCamera(knobs: [.pictureRing(10)])
            let srtPort = LoopbackPort.free(udp: true)
            let rtspPort = LoopbackPort.free(udp: false)
            let udpPort = LoopbackPort.free(udp: true)
            // Receivers that copy what they get, decoding nothing: what a media server does.
            let receivers = try [
                ["-i", "srt://127.0.0.1:\(srtPort)?mode=listener&timeout=20000000", "-c", "copy", "-f", "mpegts",
                 camera.file("srt.ts")],
                ["-rtsp_flags", "listen", "-timeout", "20", "-i", "rtsp://127.0.0.1:\(rtspPort)/cam", "-c", "copy",
                 "-f", "mpegts", camera.file("rtsp.ts")],
                ["-i", "udp://127.0.0.1:\(udpPort)?fifo_size=1000000&timeout=3000000", "-c", "copy", "-f", "mpegts",
                 camera.file("udp.ts")],
            ].map { arguments in
                try ChildProcess(["ffmpeg", "-v", "error", "-y"] + arguments, environment: ProcessInfo.processInfo.environment)
            }
            // Each receiver's port bound before the recording starts: a fixed half second was too
            // short for ffmpeg to start on a busy machine, and a stream lost its first 45 pictures.
            for (receiver, (port, udp)) in zip(receivers, [(srtPort, true), (rtspPort, false), (udpPort, true)]) {
                try #require(LoopbackPort.waitUntilBound(port, udp: udp, by: receiver.processIdentifier,
                                                         while: { receiver.isRunning }),
                             "a receiver never bound 127.0.0.1:\(port): \(receiver.standardErrorSoFar)")
            }
            // libsrt listens a moment after binding; its caller's handshake is resent every 250 ms.
            Thread.sleep(forTimeInterval: 0.1)
            let summaryPath = camera.file("summary.json")
            let r = try ChildProcess.run(
                [Tools.vtrecord, "--device", camera.path, "--format", "mjpeg", "--size", "1920x1080", "--fps", "30",
                 "--speed", "ultrafast", "--tune", "zerolatency", "--bitrate", "8M", "--duration", "4s",
                 "-o", camera.file("local.mp4"), "-o", "srt://127.0.0.1:\(srtPort)",
                 "-o", "rtsp://127.0.0.1:\(rtspPort)/cam", "-o", "udp://127.0.0.1:\(udpPort)",
                 "--quiet", "--json-summary", summaryPath],
                environment: try camera.environment(), timeout: .seconds(60))
            #expect(r.status == 0, "\(r.transcript)")
            for receiver in receivers {
                receiver.send(SIGINT)
                _ = receiver.wait(timeout: .seconds(10))
            }
            let summary = SlowEncoderTests.summary(summaryPath)
            #expect(summary["dropped_queue"] as? Int == 0 && summary["dropped_driver"] as? Int == 0, "\(summary)")
            #expect(summary["frames_encoded"] as? Int == 120, "\(summary)")
            let outputs = summary["outputs"] as? [[String: Any]] ?? []
            #expect(outputs.count == 4)
            for output in outputs.dropFirst() {
                #expect((output["packets_written"] as? Int ?? 0) >= 100, "\(output)")
                #expect(output["state"] as? String == "finished", "\(output)")
            }
            for name in ["srt.ts", "rtsp.ts", "udp.ts"] {
                let streams = try Tools.ffprobe(camera.file(name), ["-count_packets", "-show_entries",
                                                                   "stream=codec_name,width,nb_read_packets"])["streams"]
                    as? [[String: Any]]
                let video = streams?.first { $0["codec_name"] as? String == "h264" }
                #expect(video?["width"] as? Int == 1920, "\(name): \(String(describing: streams))")
                #expect(Int(video?["nb_read_packets"] as? String ?? "") ?? 0 >= 100, "\(name): \(String(describing: streams))")
            }
        }
    }
}
