import Foundation
import Logging
import VTCapture
import VTCore
import VTEncoding
import VTLiveServer
import VTOutput
import VTPictures

/// `--http`: the server, what it reads of the recording, and the live view's pictures.
extension RecordingSession {
    /// How long an HLS part lasts, and the longest an HLS segment runs before it asks for a keyframe.
    static let hlsPartTarget = 0.2
    static let hlsSegmentTarget = 1.0

    /// Starts the server for `--http`; returns once it listens.
    func startLiveServer(_ http: RecordingPlan.HTTP, jpegsFromCamera: Bool, copied: CameraPixelFormat?,
                         commands: RecordingCommands, library: [RecordingLibrary.Source]) throws -> LiveServer {
        let passwords = try http.passwordFile.map { path throws(PasswordFile.Problem) in try PasswordFile(path: path) }
        var settings = LiveServer.Settings(address: http.address, passwords: passwords)
        settings.liveVideoAbsent = copied == .mjpeg
            ? "this recording keeps the camera's own Motion JPEG, which the live stream cannot carry: watch /stream.mjpeg"
            : nil
        settings.jpegsAbsent = copied == .h264
            ? "this recording keeps the camera's H.264 as it comes, with no picture to make a JPEG of: watch /live.mp4"
            : nil
        let hooks = LiveServer.Hooks(
            status: { (commands.status().flatMap { try? Array($0.jsonData()) }) ?? Array(#"{"stop_reason":"starting"}"#.utf8) },
            metrics: { commands.status().map(Self.metrics) ?? [] },
            event: { label, duration in
                // Without a duration it asks for a moment, as SIGUSR1 does.
                do throws(RecordingCommands.Refusal) {
                    try commands.event(label: label, duration: duration ?? 0, from: .http)
                    return nil
                } catch {
                    return error.description
                }
            },
            stop: { commands.stop(by: "POST /stop") },
            snapshot: { try await commands.still() })
        let server = LiveServer(settings: settings, stream: LiveStream(partTarget: Self.hlsPartTarget),
                                jpegs: JPEGFeed(fromCamera: jpegsFromCamera),
                                library: RecordingLibrary(sources: library, thumbnailer: tools.thumbnail,
                                                          isOpen: { path in OutputFileRegistry.shared.isOpen(path) }),
                                hooks: hooks)
        // Hummingbird's own log is silenced (LiveServer.start); vtrecord says what matters itself.
        try server.start(logger: Logger(label: "vtrecord.http"))
        return server
    }

    /// `--live-size`, `--live-bitrate`: the live view's own low-latency x264 encode.
    static func liveEncoding(_ http: RecordingPlan.HTTP, output: LiveFeed, format: CaptureFormat,
                             warn: @escaping @Sendable (String) -> Void) -> LiveEncoding {
        let size = http.liveSize ?? FrameSize(width: format.width & ~1, height: format.height & ~1)
        var settings = EncoderSettings()
        settings.speed = "superfast"
        settings.tune = "zerolatency"
        settings.keyFrameInterval = .seconds(1)
        settings.bFrames = 0
        settings.rateControl = .vbr
        settings.bitRate = http.liveBitRate ?? 1_000_000
        settings.maxBitRate = settings.bitRate
        settings.bufferSize = settings.bitRate.map { $0 / 2 }
        settings.threads = 1
        settings.frameRate = format.frameRate
        settings.fullRange = format.fullRange
        return LiveEncoding(
            prepare: { picture in Pictures.scaled(picture, width: size.width, height: size.height) },
            makeSession: { [settings] handler in
                try X264Session(width: size.width, height: size.height, pixelFormat: .i420, settings: settings, output: handler)
            },
            output: output, warn: warn)
    }

    /// `/stream.mjpeg`'s pictures: the camera's own JPEGs, or JPEGs made at --http-mjpeg-fps.
    static func liveJPEGs(_ jpegs: JPEGFeed, http: RecordingPlan.HTTP, fullRange: Bool,
                          warn: @escaping @Sendable (String) -> Void) -> LiveJPEGs {
        LiveJPEGs(wanted: { jpegs.wanted }, publish: { jpeg in jpegs.publish(bytes: jpeg) }, interval: http.mjpegInterval,
                  encode: { [size = http.mjpegSize] picture in
                      let shown = size.map { Pictures.scaled(picture, width: $0.width, height: $0.height) } ?? picture
                      return try Pictures.still(shown, fullRange: fullRange, quality: 80)
                  }, warn: warn)
    }

    /// The templates' folders and names, for `/recordings`.
    func librarySources() throws -> [RecordingLibrary.Source] {
        let (device, preset) = (plan.deviceName, plan.presetNames)
        return try [(plan.template, "recording"), (plan.events?.template, "clip")].compactMap { template, kind in
            guard let template, !template.isStandardOutput, let directory = template.fixedDirectory else { return nil }
            return try RecordingLibrary.Source(kind: kind, directory: directory,
                                               pattern: template.fileNamePatternText(device: device, preset: preset))
        }
    }

    /// The room on the file systems of `folders`, each once.
    static func diskFigures(_ folders: [String]) -> [RecordingSummary.Disk] {
        var seen = Set<UInt64>()
        return folders.compactMap { folder in
            var info = statvfs()
            guard statvfs(folder, &info) == 0, seen.insert(UInt64(info.f_fsid)).inserted else { return nil }
            return RecordingSummary.Disk(path: folder, freeBytes: Int64(info.f_bavail) * Int64(info.f_frsize),
                                         totalBytes: Int64(info.f_blocks) * Int64(info.f_frsize))
        }
    }

    /// `/metrics`: the summary's figures under Prometheus names.
    static func metrics(_ s: RecordingSummary) -> [LiveMetric] {
        var m: [LiveMetric] = [
            LiveMetric("vtrecord_frames_captured_total", .counter, Double(s.framesCaptured),
                       help: "Frames the source gave."),
            LiveMetric("vtrecord_frames_encoded_total", .counter, Double(s.framesEncoded), help: "Frames written."),
            LiveMetric("vtrecord_keyframes_total", .counter, Double(s.keyframes), help: "Keyframes written."),
            LiveMetric("vtrecord_frames_dropped_total", .counter, Double(s.droppedQueue), labels: [("stage", "queue")],
                       help: "Frames dropped: at the queue (the encoder fell behind) or by the driver."),
            LiveMetric("vtrecord_frames_dropped_total", .counter, Double(s.droppedDriver), labels: [("stage", "driver")],
                       help: "Frames dropped: at the queue (the encoder fell behind) or by the driver."),
            LiveMetric("vtrecord_frames_bad_total", .counter, Double(s.framesBad), help: "Damaged frames the source gave."),
            LiveMetric("vtrecord_written_bytes_total", .counter, Double(s.bytes), help: "Bytes of the recording written."),
            LiveMetric("vtrecord_video_bitrate_bits_per_second", .gauge, Double(s.bitrate),
                       help: "The recording's mean bit rate so far."),
            LiveMetric("vtrecord_encode_frames_per_second", .gauge, s.encodeFPS, help: "Frames encoded per second."),
            LiveMetric("vtrecord_capture_frames_per_second", .gauge, s.captureFPS, help: "Frames captured per second."),
            LiveMetric("vtrecord_recording_seconds", .gauge, s.seconds, help: "How long the recording has run."),
        ]
        if let p50 = s.latencyP50 {
            m.append(LiveMetric("vtrecord_capture_to_write_p50_seconds", .gauge, p50 / 1000,
                                help: "Median time from capture to written."))
        }
        if let audio = s.audio {
            m.append(LiveMetric("vtrecord_audio_gaps_total", .counter, Double(audio.gaps), help: "Gaps in the sound filled with silence."))
            if let drift = audio.driftPPM {
                m.append(LiveMetric("vtrecord_audio_drift_ppm", .gauge, drift, help: "The sound clock against the camera's, in ppm."))
            }
        }
        if let events = s.events {
            m.append(LiveMetric("vtrecord_event_triggers_total", .counter, Double(events.triggers), help: "Event requests taken."))
            m.append(LiveMetric("vtrecord_event_clips_total", .counter, Double(events.clips.count), help: "Event clips begun."))
            m.append(LiveMetric("vtrecord_preroll_held_bytes", .gauge, Double(events.heldBytes),
                                help: "Bytes the pre-roll holds in memory."))
        }
        if let motion = s.motion {
            m.append(LiveMetric("vtrecord_motion_score", .gauge, motion.scoreLast, help: "The latest motion score (share of the picture that moved, %)."))
            m.append(LiveMetric("vtrecord_motion_episodes_total", .counter, Double(motion.episodes), help: "Motion episodes seen."))
        }
        if let retention = s.retention {
            m.append(LiveMetric("vtrecord_retention_deleted_files_total", .counter, Double(retention.filesDeleted),
                                help: "Files deleted to keep within --keep-size, --keep-age, --keep-free."))
            m.append(LiveMetric("vtrecord_retention_freed_bytes_total", .counter, Double(retention.bytesFreed),
                                help: "Bytes those deletions freed."))
        }
        for output in s.outputs where output.role == .secondary {
            let name = [("output", output.report.name)]
            m.append(LiveMetric("vtrecord_output_up", .gauge, output.report.state == .connected ? 1 : 0, labels: name,
                                help: "Whether an output beside the recording is taking packets."))
            m.append(LiveMetric("vtrecord_output_packets_dropped_total", .counter, Double(output.report.packetsDropped),
                                labels: name, help: "Packets an output beside the recording could not take."))
        }
        for disk in s.disk ?? [] {
            m.append(LiveMetric("vtrecord_disk_free_bytes", .gauge, Double(disk.freeBytes), labels: [("path", disk.path)],
                                help: "Free bytes on the file system the recording writes to."))
        }
        return m
    }
}
