import Foundation
import VTCore
import VTOutput
import VTRecorder

/// What a recording says of itself: the names it gives its source and segments, the line on
/// stderr at the end and the JSON summary.
extension Record {
    func writeSummary(_ summary: RecordingSummary, to path: String) throws {
        try writeWholeFile(path: path, bytes: Array(summary.jsonData()))
    }

    /// `{device}` in -o: the camera's node name (`video0`), the input file's name without its
    /// extension, `stdin`, or `test-pattern`.
    static func deviceName(camera: String?, input: String?) -> String {
        if let camera { return URL(fileURLWithPath: camera).lastPathComponent }
        guard let input else { return "test-pattern" }
        return input == "-" ? "stdin" : URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
    }

    /// Where the frames went: standard output, a file, or a run of files.
    static func target(_ s: RecordingSummary) -> String {
        guard let first = s.segments.first, let last = s.segments.last else { return s.output }
        if s.segments.count == 1 { return first == "-" ? "standard output" : first }
        return "\(s.segments.count) files, \(first) … \(last)"
    }

    /// `clipsOnly`: `--events` without `-o`, where what was encoded is not what was kept.
    static func describe(_ s: RecordingSummary, result: RecordingResult, clipsOnly: Bool = false) -> String {
        let media = Double(s.framesEncoded) / (FrameRate(parsing: s.format.fps)?.framesPerSecond ?? 1)
        var line = String(format: "%@ %d frames (%.2f s, %d keyframes, %@ bytes, %.2f Mbit/s)%@ in %.2f s (%.1f fps)",
                          clipsOnly ? "encoded" : "wrote", s.framesEncoded, media, s.keyframes, "\(s.bytes)",
                          Double(s.bitrate) / 1e6, clipsOnly ? "" : " to " + target(s), s.seconds, s.encodeFPS)
        if let events = s.events {
            let frames = events.clips.reduce(0) { $0 + $1.frames }
            line += events.clips.isEmpty ? "; no event clip"
                : "; \(events.clips.count) event clip\(events.clips.count == 1 ? "" : "s") (\(frames) frames): "
                    + (events.clips.count <= 3 ? events.clips.map(\.file).joined(separator: ", ")
                                               : "\(events.clips.first!.file) … \(events.clips.last!.file)")
        }
        if s.droppedQueue > 0 { line += "; \(s.droppedQueue) frames dropped because the encoder fell behind" }
        if s.droppedDriver > 0 { line += "; \(s.droppedDriver) frames dropped by the camera driver" }
        if s.framesBad > 0 { line += "; \(s.framesBad) damaged frames skipped" }
        if s.framesDuplicated > 0 { line += "; \(s.framesDuplicated) frames repeated to keep the frame rate" }
        if let speed = s.speed {
            // Where the time went, longest first (VA-API's steps are quality levels).
            let spent = speed.steps.compactMap { name in speed.seconds[name].map { (name, $0) } }
                .filter { $0.1 >= 0.05 }.sorted { $0.1 > $1.1 }
            line += "; speeds (--realtime adaptive from --speed \(s.settings?.speed ?? speed.slowest)): "
                + spent.map { String(format: "%@ %.1f s", $0.0, $0.1) }.joined(separator: ", ")
        }
        if let sound = s.audio {
            let layout = sound.channels == 1 ? "mono" : sound.channels == 2 ? "stereo" : "\(sound.channels) channels"
            line += String(format: "; sound: %.2f s of %@ %d Hz %@ from %@", sound.seconds, sound.codec, sound.rate, layout, sound.device)
            if sound.gaps > 0 { line += String(format: ", %d gaps filled with %.2f s of silence", sound.gaps, sound.silenceSeconds) }
            if sound.xruns > 0 { line += ", \(sound.xruns) overruns" }
            if let drift = sound.driftPPM { line += String(format: ", clock %+.0f ppm", drift) }
        }
        return line
    }
}
