import VTCore
import VTH264

/// The boxes of a live fragmented MP4 (one H.264 track), for Media Source Extensions and
/// HLS: an init segment (`ftyp` + `moov` with empty sample tables), then `moof` + `mdat`
/// fragments of one picture or a few, each built once and shared by every viewer.
///
/// Times count from the first picture given, in 90 kHz ticks, on one time line for all
/// viewers: one who joins later gets fragments whose decode times continue it. A fragment's
/// last picture lasts until the next picture's decode time where it is known, else as long as
/// the step to it from the picture before (at least one frame interval): a player places each
/// fragment by its own `tfdt`, so a guess that is off moves nothing.
///
/// Pictures missing from the live stream (dropped at the recording's queue, or skipped by the
/// live view's own encoder while it was behind) leave no gap on the time line: a step is at
/// most one and a half times the last picture's duration, and the time beyond is taken out.
/// Media Source Extensions take a decode time more than twice the last duration past the one
/// before for a discontinuity and drop every picture after it up to the next keyframe (W3C
/// MSE, coded frame processing), which froze the browser's picture for up to a keyframe
/// interval after a few pictures were skipped; the margin below two covers the rounding of
/// 90 kHz ticks to a browser's microseconds. A camera whose rate falls (a long exposure in low
/// light) lengthens the durations within a few pictures and keeps its true time.
public struct MP4LiveFragmenter: Sendable {
    public static let timescale: Int32 = 90_000

    /// One picture's place on the live time line, in ticks.
    public struct Sample: Sendable {
        public var decode: Int64
        public var presentation: Int64
        public var size: Int
        public var isKeyFrame: Bool
        /// How long the picture is taken to last while the next one's time is unknown.
        public var duration: Int64
    }

    /// The pictures of a fragment waiting for its end.
    public struct Pending: Sendable {
        var samples: [Sample] = []
        var data: [UInt8] = []

        public init() {}

        public mutating func append(_ sample: Sample, _ bytes: [UInt8]) {
            samples.append(sample)
            data.append(contentsOf: bytes)
        }

        public var isEmpty: Bool { samples.isEmpty }
        public var count: Int { samples.count }
        /// The first picture's decode time, in ticks.
        public var firstDecode: Int64? { samples.first?.decode }
        public var startsWithKeyFrame: Bool { samples.first?.isKeyFrame ?? false }
    }

    private var parameterSets = TrackParameterSets()
    private var base: Int64?
    private var lastDecode: Int64 = -1
    private var lastDuration: Int64
    private var sequence: UInt32 = 0
    private let frameTicks: Int64

    public init(frameRate: FrameRate) {
        frameTicks = max(1, frameRate.frameDuration.ticks(since: .zero, timescale: Self.timescale))
        lastDuration = frameTicks
    }

    /// The init segment for `format`: nil if it cannot be described (no parameter sets).
    /// A new size needs a new init segment, and viewers a new start.
    public mutating func initSegment(for format: VideoFormatDescription) -> [UInt8]? {
        parameterSets = TrackParameterSets()
        guard (try? parameterSets.update(format, fixed: false, container: "a live MP4")) != nil,
              let trackFormat = parameterSets.trackFormat else { return nil }
        let track = MP4Track(id: 1, media: .video(width: trackFormat.width, height: trackFormat.height,
                                                  coding: parameterSets.mp4Coding,
                                                  sampleAspectRatio: parameterSets.sampleAspectRatio),
                             timescale: UInt32(Self.timescale))
        return MP4Boxes.fileType() + MP4Boxes.movie([track], metadata: ContainerMetadata(encoder: "vtrecord"), fragmented: true)
    }

    /// The place `frame` takes on the live time line: decode times count from the first
    /// frame, always increase, and step at most one and a half durations at a time.
    public mutating func sample(for frame: EncodedFrame) -> Sample {
        let decodeTime = frame.dts.converted(to: Self.timescale).value
        var base = self.base ?? decodeTime
        var decode = decodeTime - base
        var duration = frameTicks
        if lastDecode >= 0 {
            let longest = lastDuration * 3 / 2
            if decode - lastDecode > longest {
                base += decode - lastDecode - longest
                decode = lastDecode + longest
            }
            decode = max(decode, lastDecode + 1)
            duration = max(frameTicks, decode - lastDecode)
        }
        let presentation = max(frame.pts.converted(to: Self.timescale).value - base, decode)
        self.base = base
        lastDecode = decode
        lastDuration = duration
        return Sample(decode: decode, presentation: presentation, size: frame.data.count, isKeyFrame: frame.isKeyFrame,
                      duration: duration)
    }

    /// The decode time, in ticks, of the last frame placed.
    public var lastDecodeTicks: Int64 { lastDecode }

    /// `moof` + `mdat` for the pending frames; the last lasts until `end` (ticks) when given.
    public mutating func fragment(_ pending: Pending, endingAt end: Int64? = nil) -> [UInt8] {
        fragment(pending.samples, payload: pending.data, endingAt: end)
    }

    /// `moof` + `mdat` of one picture, its bytes copied once, straight into the fragment.
    public mutating func fragment(_ sample: Sample, data: [UInt8]) -> [UInt8] {
        fragment([sample], payload: data, endingAt: nil)
    }

    private mutating func fragment(_ pictures: [Sample], payload: [UInt8], endingAt end: Int64?) -> [UInt8] {
        guard let first = pictures.first else { return [] }
        var samples: [MP4Sample] = []
        samples.reserveCapacity(pictures.count)
        for (index, sample) in pictures.enumerated() {
            let next = index + 1 < pictures.count ? pictures[index + 1].decode
                : max(end ?? sample.decode + sample.duration, sample.decode + 1)
            samples.append(MP4Sample(size: UInt32(sample.size), duration: UInt32(next - sample.decode),
                                     compositionOffset: UInt32(sample.presentation - sample.decode),
                                     isKeyFrame: sample.isKeyFrame))
        }
        sequence += 1
        let run = MP4TrackRun(trackID: 1, baseDecodeTime: UInt64(first.decode), samples: samples,
                              allSync: false, dataOffset: 0)
        var bytes = MP4Boxes.fragment(sequence: sequence, runs: [run])
        var header = BoxBuilder()
        header.u32(UInt32(8 + payload.count))
        header.fourCC("mdat")
        bytes.reserveCapacity(bytes.count + 8 + payload.count)
        bytes += header.bytes
        bytes += payload
        return bytes
    }

    /// The ticks of one frame interval.
    public var frameInterval: Int64 { frameTicks }
}

extension VideoFormatDescription {
    /// The RFC 6381 codec string of the stream (`avc1.64001f`), as Media Source Extensions and
    /// HLS name it: profile, constraint flags and level from the first SPS.
    public var codecString: String? {
        guard let sps = sequenceParameterSets.first, sps.count >= 4 else { return nil }
        let hex = sps[1...3].map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return "avc1." + hex
    }
}
