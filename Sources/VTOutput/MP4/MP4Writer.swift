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
public final class MP4Writer: MediaOutput {
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

        public init(frameRate: FrameRate, timescale: Int32, fragmentDuration: Double = 1,
                    keepFragmented: Bool = false, metadata: ContainerMetadata) {
            precondition(fragmentDuration > 0, "a fragment lasts some time")
            self.frameRate = frameRate
            self.timescale = timescale
            self.fragmentDuration = fragmentDuration
            self.keepFragmented = keepFragmented
            self.metadata = metadata
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
    /// The track as written so far (fragments already in the file).
    private var track: MP4Track?
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

    private struct PendingSample {
        var decodeTime: Int64
        var presentationTime: Int64
        var size: Int
        var isKeyFrame: Bool
    }

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused.
    public init(path: String, overwrite: Bool, options: Options) throws(OutputError) {
        self.options = options
        metadata = options.metadata
        file = try OutputFile(path: path, overwrite: overwrite)
        file.unitName = "fragment"
        fragmentTicks = max(1, MediaTime(seconds: options.fragmentDuration, timescale: options.timescale).value)
        frameTicks = max(1, options.frameRate.frameDuration.ticks(since: .zero, timescale: options.timescale))
    }

    public var path: String { file.path }
    public var paths: [String] { [file.path] }
    /// Only a file with no frame at all, written or waiting for its fragment.
    public var unusedFile: String? { file.isUnused && pending.isEmpty ? file.path : nil }
    public var finalized: Bool? { isFinalized }
    /// Whether a clean end can finalize this file (standard output and pipes cannot be).
    public var canFinalize: Bool { file.isRegularFile && file.path != "-" && !options.keepFragmented }

    public func writeHeader(_ format: FormatDescription) throws(OutputError) {
        // A fragmented track cannot take a new sample description once a frame is taken.
        try parameterSets.update(format, fixed: track != nil || !pending.isEmpty, container: "an MP4")
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        preconditionFailure("sound written to an output opened without a sound track")
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard parameterSets.format != nil else { preconditionFailure("a frame written before its header") }
        var decode = frame.dts.converted(to: options.timescale).value
        var presentation = frame.pts.converted(to: options.timescale).value
        if firstDecodeTicks == nil {
            firstDecodeTicks = decode
            if metadata.creationTime == nil { metadata.creationTime = Date() }
        }
        let base = firstDecodeTicks ?? decode
        decode -= base
        presentation -= base
        // Ticks coarser than the source's clock could make two decode times equal.
        decode = max(decode, lastDecodeTime + 1)
        presentation = max(presentation, decode)
        if let first = pending.first,
           frame.isKeyFrame || decode - first.decodeTime >= fragmentTicks {
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

    public func finish(keepEmpty: Bool) throws(OutputError) {
        if !keepEmpty && unusedFile != nil && file.removeIfUnused() { return }
        if !pending.isEmpty { try writeFragment(endingAt: lastDecodeTime + frameTicks) }
        if canFinalize, fragmentedMovieOffset != nil { try finalize() }
        try file.close()
    }

    public func abandon() {
        // The frames waiting for their fragment are written if the medium still takes them;
        // what was written stays a fragmented MP4 that plays.
        if !pending.isEmpty { try? writeFragment(endingAt: lastDecodeTime + frameTicks) }
        if !file.removeIfUnused() { try? file.close() }
    }

    /// Writes the waiting samples as one fragment (with the file's header first, for the
    /// first); the last sample lasts until `end`, the next fragment's first decode time.
    private func writeFragment(endingAt end: Int64) throws(OutputError) {
        guard let format = parameterSets.trackFormat, let firstPresentation = pending.first?.presentationTime else { return }
        var samples: [MP4Sample] = []
        samples.reserveCapacity(pending.count)
        for (index, sample) in pending.enumerated() {
            let next = index + 1 < pending.count ? pending[index + 1].decodeTime : max(end, sample.decodeTime + 1)
            samples.append(MP4Sample(size: UInt32(sample.size), duration: UInt32(next - sample.decodeTime),
                                     compositionOffset: UInt32(sample.presentationTime - sample.decodeTime),
                                     isKeyFrame: sample.isKeyFrame))
        }
        var bytes: [UInt8] = []
        var movieOffset: Int64?
        // Taken out while it grows, so its sample table is appended to in place, not copied.
        var track = self.track.take() ?? MP4Track(
            width: format.width, height: format.height, timescale: UInt32(options.timescale), avcC: parameterSets.avcC,
            sampleAspectRatio: parameterSets.sampleAspectRatio, leadingTicks: firstPresentation)
        defer { self.track = track }
        if fragmentedMovieOffset == nil {
            bytes = MP4Boxes.fileType()
            movieOffset = file.endOffset + Int64(bytes.count)
            bytes += MP4Boxes.movie(track, metadata: metadata, fragmented: true)
        }
        let moof = MP4Boxes.fragment(sequence: sequence + 1, baseDecodeTime: UInt64(pending[0].decodeTime),
                                     samples: samples)
        bytes += moof
        var mdatHeader = BoxWriter()
        mdatHeader.u32(UInt32(8 + pendingData.count))
        mdatHeader.fourCC("mdat")
        bytes += mdatHeader.bytes
        let dataOffset = file.endOffset + Int64(bytes.count)
        bytes += pendingData
        try file.append(bytes)
        file.startWriteback(ofLast: Int64(bytes.count))

        if let movieOffset { fragmentedMovieOffset = movieOffset }
        sequence += 1
        track.samples += samples
        track.presentationEnd = lastPresentationTime + frameTicks
        track.chunks.append(MP4Chunk(offset: dataOffset, sampleCount: samples.count))
        statistics.bytes = file.endOffset
        statistics.frames += samples.count
        statistics.keyFrames += samples.count { $0.isKeyFrame }
        pending.removeAll(keepingCapacity: true)
        pendingData.removeAll(keepingCapacity: true)
    }

    /// Appends the complete `moov`, waits for it to reach the medium, then hides the fragments
    /// inside one `mdat` that starts where the fragmented `moov` did.
    private func finalize() throws(OutputError) {
        guard let track, let start = fragmentedMovieOffset else { return }
        let movie = MP4Boxes.movie(track, metadata: metadata, fragmented: false)
        let movieOffset = file.endOffset
        try file.append(movie)
        try file.synchronize()
        var header = BoxWriter()
        header.u32(1)  // the size is the 64-bit one that follows
        header.fourCC("mdat")
        header.u64(UInt64(movieOffset - start))
        try file.overwrite(header.bytes, at: start)
        statistics.bytes = file.endOffset
        isFinalized = true
    }
}
