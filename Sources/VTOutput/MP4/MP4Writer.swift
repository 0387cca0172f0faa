import Foundation
import VTCore
import VTH264

/// Writes an MP4 file that survives a crash and is a plain MP4 after a clean end.
///
/// While recording the file is a fragmented MP4: `ftyp`, a `moov` with empty sample tables and
/// `mvex`, then a `moof` + `mdat` per fragment, each written with one write(2) whose writeback
/// to the medium starts at once. A fragment
/// starts at every keyframe and after `fragmentDuration` at the latest, so a kill, a power cut
/// or a full disk leaves a file that plays to its last complete fragment.
///
/// At a clean end (`finish`) the file is finalized in place, without touching the media: a
/// complete `moov` (every sample, its chunk offsets pointing into the fragments' `mdat`
/// payloads) is appended and made durable, and then one 16-byte write turns the header of the
/// first `moov` into the header of an `mdat` that spans everything up to the new `moov`. The
/// fragments' boxes become bytes inside that `mdat`, and readers see `ftyp`, `mdat`, `moov`:
/// a regular MP4. Until that last write the file is still a valid fragmented MP4 (a reader
/// skips the second `moov`). Standard output and `keepFragmented` stay fragmented.
///
/// Times: each frame's decode and presentation time, converted to the track's timescale;
/// decode times start at 0, and an edit list skips the decode lead of B-frames so the first
/// picture shows at 0. The last picture lasts one nominal frame interval.
///
/// Sound, when the writer is opened with it, is a second track (`MP4SoundTrack`) timed in
/// samples: each fragment carries the packets written since the one before, after the
/// pictures in its `mdat`. Its edit list shows the recording's sound at the same movie time as
/// the pictures of the same instant: an encoder's priming is skipped, sound that starts late
/// begins with an empty edit. The first fragment holds the file's header, which says where
/// the sound starts, so it waits (a few seconds at most) for the sound to reach the pictures.
public final class MP4Writer: SingleFileOutput {
    public struct Options: Sendable {
        /// The nominal frame rate: the last frame's duration, and the timescale when the
        /// source's own times are not used.
        public var frameRate: FrameRate
        /// Ticks per second of the track.
        public var timescale: Int32
        /// The longest fragment, in seconds; a keyframe starts one sooner.
        public var fragmentDuration: Double
        /// Leave the file fragmented at a clean end.
        public var keepFragmented: Bool
        public var metadata: ContainerMetadata
        /// The sound track: AAC or Opus (PCM is refused when the writer opens).
        public var audio: AudioFormatDescription?

        public init(frameRate: FrameRate, timescale: Int32, fragmentDuration: Double = 1,
                    keepFragmented: Bool = false, metadata: ContainerMetadata, audio: AudioFormatDescription? = nil) {
            precondition(fragmentDuration > 0, "a fragment lasts some time")
            self.frameRate = frameRate
            self.timescale = timescale
            self.fragmentDuration = fragmentDuration
            self.keepFragmented = keepFragmented
            self.metadata = metadata
            self.audio = audio
        }

        /// A timescale in which every frame interval of `rate` is a whole number of ticks:
        /// 90 kHz when it is (24, 25, 30, 50, 60 and 30000/1001 fps), else the rate's own
        /// numerator (24000 for 24000/1001). A source with its own capture times (a camera)
        /// always gets 90 kHz.
        public static func timescale(for rate: FrameRate, sourceTimes: Bool) -> Int32 {
            if sourceTimes || (90_000 * rate.denominator) % rate.numerator == 0 { return 90_000 }
            return Int32(rate.numerator)
        }
    }

    public let file: OutputFile
    public private(set) var statistics = OutputStatistics()
    /// True once a clean end left a regular, non-fragmented MP4.
    public private(set) var isFinalized = false

    private let options: Options
    private var metadata: ContainerMetadata
    private var parameterSets = TrackParameterSets()
    /// The video track as written so far (fragments already in the file); made at the first
    /// frame.
    private var track: MP4Track?
    /// The sound track; nil for a recording without sound.
    private var sound: MP4SoundTrack?
    /// Where the fragmented `moov` starts; nil until the first fragment is written.
    private var fragmentedMovieOffset: Int64?
    private var pending: [PendingSample] = []
    private var pendingData: [UInt8] = []
    private var sequence: UInt32 = 0
    /// The first frame's decode time in ticks: decode times in the file count from it.
    private var firstDecodeTicks: Int64?
    private var lastDecodeTime: Int64 = -1
    /// The latest presentation time so far, in the file's decode-time ticks.
    private var lastPresentationTime: Int64 = .min
    private let fragmentTicks: Int64
    private let frameTicks: Int64
    /// How long the first fragment waits for the sound to reach the pictures, in ticks: long
    /// enough for a sound that starts a few seconds late, short enough that a sound that never
    /// comes keeps the pictures out of the file only that long.
    private let soundWaitTicks: Int64

    private struct PendingSample {
        var decodeTime: Int64
        var presentationTime: Int64
        var size: Int
        var isKeyFrame: Bool
    }

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused. Sound
    /// that an MP4 here cannot carry (PCM, or setup bytes that do not describe the stream) is
    /// refused as a muxer error before the file is made.
    public init(path: String, overwrite: Bool, options: Options) throws(OutputError) {
        self.options = options
        metadata = options.metadata
        if let audio = options.audio {
            do {
                sound = try MP4SoundTrack(audio)
            } catch {
                throw .muxer(path: path, reason: error.reason)
            }
        }
        fragmentTicks = max(1, MediaTime(seconds: options.fragmentDuration, timescale: options.timescale).value)
        frameTicks = max(1, options.frameRate.frameDuration.ticks(since: .zero, timescale: options.timescale))
        soundWaitTicks = max(fragmentTicks, MediaTime(seconds: 5, timescale: options.timescale).value)
        file = try OutputFile(path: path, overwrite: overwrite)
        file.unitName = "fragment"
    }

    public var path: String { file.path }
    /// Only a file with no frame at all, written or waiting for its fragment.
    public var holdsNothing: Bool { pending.isEmpty }
    public var finalized: Bool? { isFinalized }
    /// Whether a clean end can finalize this file (standard output and pipes cannot be).
    public var canFinalize: Bool { file.isRegularFile && file.path != "-" && !options.keepFragmented }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        // A fragmented track cannot take a new sample description once a frame is taken.
        try parameterSets.update(format, fixed: track != nil || !pending.isEmpty, container: "an MP4")
    }

    /// Takes a packet for the next fragment; one that ends before the first picture is held
    /// back (see `MP4SoundTrack`). Nothing is written until the next fragment is cut.
    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        guard sound != nil else { preconditionFailure("sound written to an output opened without a sound track") }
        sound?.take(packet)
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard parameterSets.format != nil else { preconditionFailure("a frame written before its header") }
        var decode = frame.dts.converted(to: options.timescale).value
        var presentation = frame.pts.converted(to: options.timescale).value
        let base = firstDecodeTicks ?? decode
        decode -= base
        presentation -= base
        // Ticks coarser than the source's clock could make two decode times equal.
        decode = max(decode, lastDecodeTime + 1)
        presentation = max(presentation, decode)
        if firstDecodeTicks == nil, let format = parameterSets.trackFormat {
            firstDecodeTicks = base
            if metadata.creationTime == nil { metadata.creationTime = Date() }
            track = MP4Track(id: 1, media: .video(width: format.width, height: format.height,
                                                  coding: parameterSets.mp4Coding,
                                                  sampleAspectRatio: parameterSets.sampleAspectRatio),
                             timescale: UInt32(options.timescale), presentationStart: presentation)
            sound?.picturesStart(at: frame.pts)
        }
        if let first = pending.first,
           frame.isKeyFrame || decode - first.decodeTime >= fragmentTicks,
           !waitsForSound(since: first.decodeTime, at: decode) {
            try writeFragment(endingAt: decode)
        }
        var size = frame.data.count
        if frame.isKeyFrame && !parameterSets.inBand.isEmpty {
            pendingData.append(contentsOf: parameterSets.inBand)
            size += parameterSets.inBand.count
        }
        pendingData.append(contentsOf: frame.data)
        pending.append(PendingSample(decodeTime: decode, presentationTime: presentation, size: size,
                                     isKeyFrame: frame.isKeyFrame))
        lastDecodeTime = decode
        lastPresentationTime = max(lastPresentationTime, presentation)
    }

    public func complete() throws(OutputError) {
        if hasPending { try writeFragment(endingAt: lastDecodeTime + frameTicks) }
        if canFinalize, fragmentedMovieOffset != nil { try finalize() }
    }

    public func salvage() {
        // The frames and sound waiting for their fragment are written if the medium still takes
        // them; what was written stays a fragmented MP4 that plays.
        if hasPending { try? writeFragment(endingAt: lastDecodeTime + frameTicks) }
    }

    private var hasPending: Bool { !pending.isEmpty || sound?.pending.isEmpty == false }

    /// Whether the first fragment, due by the video's rules, keeps waiting for the sound to
    /// reach the pictures: its header says where the sound starts.
    private func waitsForSound(since start: Int64, at decode: Int64) -> Bool {
        fragmentedMovieOffset == nil && sound?.hasStarted == false && decode - start < soundWaitTicks
    }

    /// Writes the waiting samples of both tracks as one fragment (with the file's header first,
    /// for the first), the pictures' data before the sound's in its `mdat`; the last picture
    /// lasts until `end`, the next fragment's first decode time.
    private func writeFragment(endingAt end: Int64) throws(OutputError) {
        // Taken out while it grows, so its sample table is appended to in place, not copied.
        guard var track = self.track.take() else { return }
        defer { self.track = track }
        var video: MP4TrackRun?
        if !pending.isEmpty {
            var samples: [MP4Sample] = []
            samples.reserveCapacity(pending.count)
            for (index, sample) in pending.enumerated() {
                let next = index + 1 < pending.count ? pending[index + 1].decodeTime : max(end, sample.decodeTime + 1)
                samples.append(MP4Sample(size: UInt32(sample.size), duration: UInt32(next - sample.decodeTime),
                                         compositionOffset: UInt32(sample.presentationTime - sample.decodeTime),
                                         isKeyFrame: sample.isKeyFrame))
            }
            video = MP4TrackRun(trackID: track.id, baseDecodeTime: UInt64(pending[0].decodeTime), samples: samples,
                                allSync: false, dataOffset: 0)
        }
        if fragmentedMovieOffset == nil { sound?.describe() }
        let audio = sound?.run(dataOffset: pendingData.count)
        let runs = [video, audio].compactMap { $0 }
        guard !runs.isEmpty else { return }
        var bytes: [UInt8] = []
        var movieOffset: Int64?
        if fragmentedMovieOffset == nil {
            bytes = MP4Boxes.fileType()
            movieOffset = file.endOffset + Int64(bytes.count)
            bytes += MP4Boxes.movie([track] + [sound?.track].compactMap { $0 }, metadata: metadata, fragmented: true)
        }
        bytes += MP4Boxes.fragment(sequence: sequence + 1, runs: runs)
        let soundBytes = sound?.pendingData.count ?? 0
        var mdatHeader = BoxBuilder()
        mdatHeader.u32(UInt32(8 + pendingData.count + soundBytes))
        mdatHeader.fourCC("mdat")
        bytes += mdatHeader.bytes
        let dataOffset = file.endOffset + Int64(bytes.count)
        bytes += pendingData
        if soundBytes > 0, let soundData = sound?.pendingData { bytes += soundData }
        try file.append(bytes)
        file.startWriteback(ofLast: Int64(bytes.count))

        if let movieOffset { fragmentedMovieOffset = movieOffset }
        sequence += 1
        if let video {
            track.samples += video.samples
            track.presentationEnd = lastPresentationTime + frameTicks
            track.chunks.append(MP4Chunk(offset: dataOffset, sampleCount: video.samples.count))
            statistics.frames += video.samples.count
            statistics.keyFrames += video.samples.count { $0.isKeyFrame }
        }
        if let audio { sound?.written(audio, at: dataOffset + Int64(pendingData.count)) }
        statistics.bytes = file.endOffset
        pending.removeAll(keepingCapacity: true)
        pendingData.removeAll(keepingCapacity: true)
    }

    /// Appends the complete `moov`, waits for it to reach the medium, then hides the fragments
    /// inside one `mdat` that starts where the fragmented `moov` did.
    private func finalize() throws(OutputError) {
        guard let track, let start = fragmentedMovieOffset else { return }
        // A sound track that never reached the pictures has nothing to list.
        let soundTrack = sound?.track.flatMap { $0.samples.isEmpty ? nil : $0 }
        let movie = MP4Boxes.movie([track] + [soundTrack].compactMap { $0 }, metadata: metadata, fragmented: false)
        let movieOffset = file.endOffset
        try file.append(movie)
        try file.synchronize()
        var header = BoxBuilder()
        header.u32(1)  // the size is the 64-bit one that follows
        header.fourCC("mdat")
        header.u64(UInt64(movieOffset - start))
        try file.overwrite(header.bytes, at: start)
        statistics.bytes = file.endOffset
        isFinalized = true
    }
}
