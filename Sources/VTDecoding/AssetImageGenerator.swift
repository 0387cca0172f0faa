import Foundation
import VTCore
import VTPictures
import VTReading

/// Pictures out of a recording at chosen times (AVFoundation's `AVAssetImageGenerator`): by
/// default the keyframe at or before each time, which takes one decoded frame; with `exact`,
/// the first picture at or after the time (as `ffmpeg -ss T` gives it), decoded from the
/// keyframe before it. MP4, Matroska and MPEG-TS seek through their index (MP4's sync samples,
/// Matroska's cues), so a picture from the middle of an hour does not read the hour before it;
/// a raw stream has no index and is read from its start (its pictures are decoded only from
/// the last keyframe before the time).
public final class AssetImageGenerator {
    public let path: String
    /// Seconds, when the file says (a raw stream: its frames at its SPS's rate, once read).
    public private(set) var duration: Double?
    /// Which decoder each picture is decoded with (`--decoder`).
    public let decoders: DecoderChooser
    private var reader: AssetReader
    private let isRaw: Bool
    private let rate: Double

    public init(path: String, decoders: DecoderChooser = DecoderChooser()) throws(ReadError) {
        self.path = path
        self.decoders = decoders
        reader = try AssetReader(path: path)
        isRaw = reader.container == "h264"
        rate = reader.frameRate?.framesPerSecond ?? 25
        duration = isRaw ? nil : reader.duration
    }

    /// A picture the generator made: its own copy, and the time of the frame it shows.
    public struct Image {
        public let picture: PixelBuffer
        public let time: Double
        public let isKeyFrame: Bool
        /// Full-range levels (0–255, as JPEG has them) rather than video's 16–235.
        public let isFullRange: Bool
    }

    /// The picture for `time` seconds from the start of the file. A VA-API decoder that fails
    /// under `--decoder auto` gives way to software, and the picture is decoded again.
    public func image(at time: Double, exact: Bool) throws -> Image {
        do {
            return try decodedImage(at: time, exact: exact)
        } catch where decoders.fallBack(after: error) {
            return try decodedImage(at: time, exact: exact)
        }
    }

    private func decodedImage(at time: Double, exact: Bool) throws -> Image {
        if isRaw { return try rawImage(at: time, exact: exact) }
        let start = reader.startTime
        let target = start + time + 0.000_001
        guard var keyframe = try keyframe(before: target, start: start) else {
            throw ReadError(path: path, reason: String(format: "has no keyframe to show at %.3f s", time))
        }
        if !exact {
            // The last keyframe at or before the time: read on (not decoding) while one can still
            // come, that is until a frame decodes after the time.
            while let packet = try reader.nextPacket(), packet.frame.dts.seconds <= target {
                if packet.frame.isKeyFrame, packet.format != nil, packet.frame.pts.seconds <= target { keyframe = packet }
            }
        }
        guard let format = keyframe.format else {
            throw ReadError(path: path, reason: "its keyframe has no SPS and PPS")
        }
        var chosen: Image?
        var last: Image?
        let session = try decoders.session(format: format) { decoded in
            guard chosen == nil else { return }
            let image = Image(picture: Pictures.copy(decoded.pixelBuffer), time: decoded.pts.seconds - start,
                              isKeyFrame: decoded.token == FrameToken(0), isFullRange: decoded.isFullRange)
            if !exact || image.time + start >= target - 0.000_002 { chosen = image } else { last = image }
        }
        defer { session.invalidate() }
        var frame = keyframe.frame
        frame.token = FrameToken(0)
        try session.decode(frame, format: keyframe.format)
        if exact {
            var index: UInt64 = 0
            while chosen == nil, let packet = try reader.nextPacket() {
                var frame = packet.frame
                index += 1
                frame.token = FrameToken(index)
                do { try session.decode(frame, format: packet.format) } catch DecoderError.damaged { continue }
            }
        }
        if chosen == nil {
            // A damaged last unit does not take the pictures before it with it.
            do { try session.finishDelayedFrames() } catch DecoderError.damaged {}
        }
        guard let image = chosen ?? last else {
            throw ReadError(path: path, reason: String(format: "has no picture to show at %.3f s", time))
        }
        return image
    }

    /// Seeks to a keyframe at or before `target` (seconds on the file's clock) and returns it,
    /// read. A transport stream's seek is a search by timestamps that can land after the time,
    /// or after the last keyframe (in the last GOP, no keyframe follows), so it steps back until
    /// the keyframe found is not later (or the start is reached).
    private func keyframe(before target: Double, start: Double) throws -> AssetReader.Packet? {
        var back = 0.0
        while true {
            try reader.seek(toKeyFrameAtOrBefore: target - back)
            var found: AssetReader.Packet?
            while let packet = try reader.nextPacket() {
                if packet.frame.isKeyFrame && packet.format != nil {
                    found = packet
                    break
                }
            }
            if let keyframe = found, keyframe.frame.pts.seconds <= target { return keyframe }
            if target - back <= start { return found }
            back = max(1, back * 2)
        }
    }

    /// A raw stream: read from the start, keeping only the GOP that holds the picture; a
    /// keyframe's picture is the first of its GOP in display order (vtrecord's and x264's GOPs
    /// are closed), so pictures are numbered from it at the stream's frame rate.
    private func rawImage(at time: Double, exact: Bool) throws -> Image {
        reader = try AssetReader(path: path)
        let wantedIndex = exact ? Int((time * rate - 0.000_001).rounded(.up)) : Int((time * rate + 0.000_001).rounded(.down))
        var gop: [AssetReader.Packet] = []
        var gopStart: Int?
        var count = 0
        while let packet = try reader.nextPacket() {
            if packet.frame.isKeyFrame && packet.format != nil {
                if count > wantedIndex && gopStart != nil { break }
                gopStart = count
                gop.removeAll(keepingCapacity: true)
            }
            if gopStart != nil { gop.append(packet) }
            count += 1
        }
        guard let gopStart, let format = gop.first?.format else {
            throw ReadError(path: path, reason: "has no keyframe to decode a picture from")
        }
        let wanted = exact ? min(max(wantedIndex - gopStart, 0), gop.count - 1) : 0
        var shown = 0
        var chosen: Image?
        let rate = self.rate
        let session = try decoders.session(format: format) { decoded in
            defer { shown += 1 }
            if chosen == nil && shown == wanted {
                chosen = Image(picture: Pictures.copy(decoded.pixelBuffer), time: Double(gopStart + shown) / rate,
                               isKeyFrame: shown == 0, isFullRange: decoded.isFullRange)
            }
        }
        defer { session.invalidate() }
        for (index, packet) in gop.enumerated() where chosen == nil {
            var frame = packet.frame
            frame.token = FrameToken(UInt64(index))
            do { try session.decode(frame, format: packet.format) } catch DecoderError.damaged { continue }
            if !exact { break }
        }
        if chosen == nil {
            // A damaged last unit does not take the pictures before it with it.
            do { try session.finishDelayedFrames() } catch DecoderError.damaged {}
        }
        guard let image = chosen else {
            throw ReadError(path: path, reason: String(format: "has no picture to show at %.3f s", time))
        }
        return image
    }

    /// The file's length in seconds: the container's, or a raw stream's frames (read, not
    /// decoded) at its frame rate.
    public func length() throws -> Double? {
        if let duration { return duration }
        guard isRaw else { return nil }
        let counting = try AssetReader(path: path)
        var frames = 0
        while try counting.nextPacket() != nil { frames += 1 }
        duration = Double(frames) / rate
        return duration
    }
}
