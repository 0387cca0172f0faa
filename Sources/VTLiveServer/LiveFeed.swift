import NIOCore
import VTCore
import VTOutput

/// The recording's encoded pictures as the HTTP server's live stream: an output beside the
/// recording, on the encoder thread. Each picture becomes one fMP4 fragment for `/live.mp4`,
/// built once for every viewer; every few pictures also make an HLS part, and a keyframe
/// closes an HLS segment.
///
/// Keyframes: a new viewer asks for one, at most once a second (as a stream that reconnects
/// does); while a player reads HLS (a playlist asked for in the last 30 s), a segment that has
/// lasted `segmentTarget` asks for one, so segments stay short whatever the recording's
/// keyframe interval (`--keyint`). Those keyframes are the recording's too.
/// Sound is not carried: the live view is a picture.
public final class LiveFeed: MediaOutput {
    public let stream: LiveStream
    private var fragmenter: MP4LiveFragmenter
    private var format: VideoFormatDescription?
    private var part = MP4LiveFragmenter.Pending()
    /// Decode time (ticks) where the HLS segment being made began.
    private var segmentStart: Int64?
    /// The presentation time of the keyframe that began it.
    private var segmentStartTime: MediaTime?
    private let partTicks: Int64
    /// Seconds after which an HLS segment asks for a keyframe, less half a picture.
    private let segmentAsk: Double?
    private var keyFramePacing = KeyFrameRequestPacing()
    public private(set) var statistics = OutputStatistics()

    /// `partTarget`: seconds of an HLS part; `segmentTarget`: seconds after which an HLS
    /// segment asks for a keyframe (nil: segments last the recording's keyframe interval).
    public init(stream: LiveStream, frameRate: FrameRate, partTarget: Double, segmentTarget: Double?) {
        self.stream = stream
        fragmenter = MP4LiveFragmenter(frameRate: frameRate)
        let interval = fragmenter.frameInterval
        // Parts a whole number of pictures long, the last one ending within half a picture of the target.
        partTicks = max(interval, Int64(partTarget * Double(MP4LiveFragmenter.timescale)) - interval / 2)
        segmentAsk = segmentTarget.map { $0 - frameRate.frameDuration.seconds / 2 }
    }

    public var paths: [String] { [] }
    public var unusedFile: String? { nil }

    public func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool {
        let now = MonotonicClock.nanoseconds()
        guard keyFramePacing.mayAsk(at: now) else { return false }
        var wanted = stream.keyFrameWanted
        // The picture asked about is the one that would start the next segment.
        if let segmentAsk, let segmentStartTime, stream.hlsWatched, pts.seconds - segmentStartTime.seconds >= segmentAsk {
            wanted = true
        }
        guard wanted else { return false }
        keyFramePacing.asked(at: now)
        stream.keyFrameAsked()
        return true
    }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        guard format != self.format else { return }
        self.format = format
        part = MP4LiveFragmenter.Pending()
        segmentStart = nil
        segmentStartTime = nil
        if let initSegment = fragmenter.initSegment(for: format) {
            stream.start(initSegment: ByteBuffer(bytes: initSegment), codec: format.codecString)
        }
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        let sample = fragmenter.sample(for: frame)
        // The part (and, at a keyframe, the segment) before this picture is complete: it ends
        // where this one begins.
        if let start = part.firstDecode, frame.isKeyFrame || sample.decode - start >= partTicks {
            closePart(endingAt: sample.decode, endsSegment: frame.isKeyFrame)
        }
        if frame.isKeyFrame {
            segmentStart = sample.decode
            segmentStartTime = frame.pts
        }
        // HLS starts at a keyframe.
        if segmentStart != nil { part.append(sample, frame.data) }
        publishAlone(sample, frame)
    }

    /// The picture as its own fragment, for `/live.mp4`.
    private func publishAlone(_ sample: MP4LiveFragmenter.Sample, _ frame: EncodedFrame) {
        let bytes = fragmenter.fragment(sample, data: frame.data)
        stream.publish(ByteBuffer(bytes: bytes), keyFrame: frame.isKeyFrame)
        statistics.frames += 1
        statistics.bytes += Int64(bytes.count)
        if frame.isKeyFrame { statistics.keyFrames += 1 }
    }

    private func closePart(endingAt end: Int64, endsSegment: Bool) {
        guard let start = part.firstDecode else { return }
        let bytes = fragmenter.fragment(part, endingAt: end)
        stream.publishPart(ByteBuffer(bytes: bytes), duration: Double(end - start) / Double(MP4LiveFragmenter.timescale),
                           independent: part.startsWithKeyFrame, endsSegment: endsSegment)
        part = MP4LiveFragmenter.Pending()
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {}

    public func finish(keepEmpty: Bool) throws(OutputError) {
        closePart(endingAt: fragmenter.lastDecodeTicks + fragmenter.frameInterval, endsSegment: true)
        stream.end()
    }

    public func abandon() { stream.end() }
}
